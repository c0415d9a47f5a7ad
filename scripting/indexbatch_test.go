package scripting

import (
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"
)

// indexAll runs IndexAll on objs and returns its results.
func indexAll(s *Script, objs []Object) []IndexResult {
	out := make([]IndexResult, len(objs))
	s.IndexAll(objs, out)
	return out
}

// TestIndexAllMatchesIndex runs the same index functions through IndexAll and through Index
// one call at a time, on objects that make some of them succeed, return nothing, break the
// return contract, throw, await or time out, and expects the same values and errors.
func TestIndexAllMatchesIndex(t *testing.T) {
	t.Parallel()
	src := `export default { indexers: {
  byName: (o) => o.metadata.name,
  byLabels: (o) => Object.keys(o.metadata.labels || {}).map((k) => k + "=" + o.metadata.labels[k]),
  none: (o) => (o.metadata.name === "empty" ? null : [o.metadata.name, "x"]),
  bad: (o) => (o.metadata.name === "number" ? 42 : "ok"),
  throws(o) { if (o.metadata.name === "boom") throw new Error("boom " + o.metadata.name); return "fine"; },
  async waits(o) { const v = await Promise.resolve(o.metadata.name); return v + "!"; },
  slow(o) { if (o.metadata.name === "loop") { for (;;) {} } return "quick"; },
} }`
	s := newTestScript(t, "all.js", src, Options{Timeout: 100 * time.Millisecond})
	defer s.Close()
	var objs []Object
	for _, name := range []string{"web", "empty", "number", "boom", "loop", "api", "boom", "db"} {
		objs = append(objs, named(name))
	}
	objs[0] = sample() // with labels
	got := indexAll(s, objs)
	names := s.Definition().Indexers
	for i, obj := range objs {
		for j, name := range names {
			want, wantErr := s.Index(name, obj)
			var gotErr error
			if got[i].Errs != nil {
				gotErr = got[i].Errs[j]
			}
			if !reflect.DeepEqual(got[i].Values[j], want) || errDetail(gotErr) != errDetail(wantErr) {
				t.Errorf("object %d %s: IndexAll = %q, %v; Index = %q, %v", i, name, got[i].Values[j], gotErr, want, wantErr)
			}
		}
	}
	if got[4].Errs == nil || !errors.Is(got[4].Errs[indexOf(names, "slow")], ErrTimeout) {
		t.Errorf("the looping call's error = %v, want ErrTimeout", got[4].Errs)
	}
	if got[1].Errs != nil || got[1].Values[indexOf(names, "none")] != nil {
		t.Errorf("empty object: %+v, want no values for 'none' and no errors", got[1])
	}
}

// errDetail is err's message and, for a script error, its JS stack.
func errDetail(err error) string {
	var se *ScriptError
	if errors.As(err, &se) {
		return se.Error() + "\n" + se.Stack
	}
	return fmt.Sprint(err)
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

// TestIndexAllKeepsTheRuntime checks that nested calls share the runtime as Index's calls do:
// module state written by one index call is seen by the next, within a batch and across.
func TestIndexAllKeepsTheRuntime(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "count.js", `let n = 0; export default { indexers: { seq: () => String(++n) } }`, Options{})
	defer s.Close()
	objs := []Object{sample(), sample(), sample()}
	var got []string
	for range 2 {
		for _, r := range indexAll(s, objs) {
			got = append(got, r.Values[0]...)
		}
	}
	if want := []string{"1", "2", "3", "4", "5", "6"}; !reflect.DeepEqual(got, want) {
		t.Errorf("values = %v, want %v", got, want)
	}
}

// TestIndexAllAfterInterrupt: an interrupted script computes nothing, and says so per call.
func TestIndexAllAfterInterrupt(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "int.js", `export default { indexers: { a: (o) => "a", b: (o) => "b" } }`, Options{})
	defer s.Close()
	s.Interrupt()
	for i, r := range indexAll(s, []Object{sample(), sample()}) {
		for j := range 2 {
			if r.Values[j] != nil || r.Errs == nil || !errors.Is(r.Errs[j], ErrInterrupted) {
				t.Errorf("object %d function %d: %q, %v; want no values and ErrInterrupted", i, j, r.Values[j], r.Errs)
			}
		}
	}
}

// TestIndexAllAbandonsAStuckCall: a call stuck in a built-in the deadline cannot reach fails
// with ErrStuck, the calls before it keep their values, and the rest of the batch runs on a
// fresh runtime (whose module state starts afresh).
func TestIndexAllAbandonsAStuckCall(t *testing.T) {
	t.Parallel()
	src := `let n = 0;
export default { indexers: { ix(o) { n++; if (o.metadata.name === "stuck") ` + stuckExpr(t, 4*time.Second) + `; return o.metadata.name + ":" + n; } } }`
	s := newTestScript(t, "stuck.js", src, Options{Timeout: 50 * time.Millisecond, Grace: 200 * time.Millisecond})
	defer s.Close()
	start := time.Now()
	got := indexAll(s, []Object{named("a"), named("b"), named("stuck"), named("c"), named("d")})
	// The stuck call runs ~4 s; abandoned, the batch ends after ~250 ms (1.1 s seen at load 15).
	if took := time.Since(start); took > 2500*time.Millisecond {
		t.Errorf("the batch took %v; the stuck call should have been abandoned after about 250ms", took)
	}
	var values []string
	for _, r := range got {
		values = append(values, strings.Join(r.Values[0], ","))
	}
	if want := []string{"a:1", "b:2", "", "c:1", "d:2"}; !reflect.DeepEqual(values, want) {
		t.Errorf("values = %q, want %q", values, want)
	}
	if got[2].Errs == nil || !errors.Is(got[2].Errs[0], ErrStuck) {
		t.Errorf("stuck call's error = %v, want ErrStuck", got[2].Errs)
	}
	for _, i := range []int{0, 1, 3, 4} {
		if got[i].Errs != nil {
			t.Errorf("object %d: errors %v", i, got[i].Errs)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); s.stuck.Load() != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the abandoned runtime never finished its call")
		}
	}
}

// TestIndexAllBoundsPromiseJobs: a promise job an index function queues runs under a
// deadline, as it does at the end of a top-level Index call: a job that never ends is
// interrupted and logged, the values stand, and the next batch runs.
func TestIndexAllBoundsPromiseJobs(t *testing.T) {
	t.Parallel()
	rec := newLogRecorder()
	s := newTestScript(t, "jobs.js", `let jobs = 0;
export default { indexers: { ix(o) {
  Promise.resolve().then(() => { jobs++; if (o.metadata.name === "spin") for (;;) {} });
  return o.metadata.name + ":" + jobs;
} } }`, Options{Timeout: 100 * time.Millisecond, Logger: slog.New(rec)})
	defer s.Close()
	first := indexAll(s, []Object{named("a"), named("spin"), named("b")})
	second := indexAll(s, []Object{named("c")})
	var values []string
	for _, r := range append(first, second...) {
		if r.Errs != nil {
			t.Errorf("errors %v", r.Errs)
		}
		values = append(values, strings.Join(r.Values[0], ","))
	}
	// The jobs of a batch run after its calls: a, spin and b all see 0. c sees two: spin's job
	// was interrupted, and b's, queued after it, dropped, as an interrupted call drops its jobs.
	if want := []string{"a:0", "spin:0", "b:0", "c:2"}; !reflect.DeepEqual(values, want) {
		t.Errorf("values = %q, want %q", values, want)
	}
	if !hasLog(rec, "a promise job queued by an index function failed") {
		t.Error("the job that never ended was not reported")
	}
}
