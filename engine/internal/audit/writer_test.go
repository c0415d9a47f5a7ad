package audit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/fake"
)

// fakeServer is a report API behind a fake dynamic client: each write waits latency, and it
// counts the writes it served, those in flight at most, and fails the applies fail names.
type fakeServer struct {
	latency   time.Duration
	writes    atomic.Int64
	inflight  atomic.Int64
	maxFlight atomic.Int64
	fail      sync.Map // report name → true: its applies fail
}

// client is a dynamic client whose applies and deletes go to f (the fake dynamic client
// serves one action at a time, which would hide the writes' concurrency) and whose lists
// find no report.
func (f *fakeServer) client() dynamic.Interface {
	c := fake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		ReportGVR: "ReportList", ClusterReportGVR: "ClusterReportList"})
	return slowClient{c, f}
}

type slowClient struct {
	dynamic.Interface
	f *fakeServer
}

func (c slowClient) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return slowResources{c.Interface.Resource(gvr), c.f}
}

type slowResources struct {
	dynamic.NamespaceableResourceInterface
	f *fakeServer
}

func (r slowResources) Namespace(ns string) dynamic.ResourceInterface {
	return slowNamespace{r.NamespaceableResourceInterface.Namespace(ns), r.f}
}

type slowNamespace struct {
	dynamic.ResourceInterface
	f *fakeServer
}

func (r slowNamespace) Apply(_ context.Context, name string, obj *unstructured.Unstructured, _ metav1.ApplyOptions, _ ...string) (*unstructured.Unstructured, error) {
	return obj, r.f.serve(name)
}

func (r slowNamespace) Delete(_ context.Context, name string, _ metav1.DeleteOptions, _ ...string) error {
	return r.f.serve(name)
}

// serve is one write of report name.
func (f *fakeServer) serve(name string) error {
	n := f.inflight.Add(1)
	defer f.inflight.Add(-1)
	for m := f.maxFlight.Load(); n > m && !f.maxFlight.CompareAndSwap(m, n); m = f.maxFlight.Load() {
	}
	time.Sleep(f.latency)
	if _, bad := f.fail.Load(name); bad {
		return errors.New("injected failure")
	}
	f.writes.Add(1)
	return nil
}

// keyGuard is a Begin that fails the test when two writes hold one key at once.
type keyGuard struct {
	t    testing.TB
	mu   sync.Mutex
	held map[string]bool
}

func (g *keyGuard) begin(key string) (func(), bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held[key] {
		g.t.Errorf("key %s written by two writes at once", key)
	}
	g.held[key] = true
	return func() { g.mu.Lock(); delete(g.held, key); g.mu.Unlock() }, true
}

func newTestWriter(t testing.TB, f *fakeServer, results *Results, parallel int) *Writer {
	g := &keyGuard{t: t, held: map[string]bool{}}
	return NewWriter(WriterConfig{Client: f.client(), Results: results, Window: time.Hour,
		Leading: func() bool { return true }, Ready: func() bool { return true },
		HasCRDs: func(context.Context) (bool, error) { return true, nil }, OnMissing: func(bool) {},
		Owns: func(string) bool { return true }, Begin: g.begin, Parallel: parallel,
		Logger: slog.New(slog.DiscardHandler)})
}

// fill sets perGroup results of each of scripts in each of namespaces.
func fill(s *Results, scripts []string, namespaces, perGroup int, result string) {
	for _, script := range scripts {
		for ns := range namespaces {
			for i := range perGroup {
				n := fmt.Sprint("ns-", ns)
				s.Set(fmt.Sprintf("apps/v1/deployments|%s/d-%d", n, i), Result{Script: script, Result: result,
					Subject: Subject{APIVersion: "apps/v1", Kind: "Deployment", Namespace: n, Name: fmt.Sprint("d-", i), UID: fmt.Sprint(ns, "-", i)}})
			}
		}
	}
}

// TestWriterWritesInParallel: 60 reports written 8 at a time take about an eighth of the
// time one at a time takes, with the exact write count, never two writes of one key at once,
// and never more than 8 in flight.
func TestWriterWritesInParallel(t *testing.T) {
	t.Parallel()
	elapsed := map[int]time.Duration{}
	for _, parallel := range []int{1, DefaultParallel} {
		f := &fakeServer{latency: 20 * time.Millisecond}
		s := NewResults(nil)
		fill(s, []string{"a.js", "b.js"}, 30, 3, Pass)
		w := newTestWriter(t, f, s, parallel)
		start := time.Now()
		if err := w.publish(t.Context()); err != nil {
			t.Fatalf("parallel %d: publish: %v", parallel, err)
		}
		elapsed[parallel] = time.Since(start)
		if got := f.writes.Load(); got != 60 || w.Writes() != 60 {
			t.Errorf("parallel %d: server served %d writes, writer counted %d; want 60", parallel, got, w.Writes())
		}
		if m := f.maxFlight.Load(); m > int64(parallel) || (parallel > 1 && m < 2) {
			t.Errorf("parallel %d: %d writes in flight at most", parallel, m)
		}
		if !w.Current() {
			t.Errorf("parallel %d: reports not current after a publish", parallel)
		}
	}
	if ratio := float64(elapsed[1]) / float64(elapsed[DefaultParallel]); ratio < 3 {
		t.Errorf("one at a time %s, %d at a time %s: ratio %.1f, want at least 3", elapsed[1], DefaultParallel, elapsed[DefaultParallel], ratio)
	}
}

// TestWriterRetriesAfterError: a failed apply fails the publish, which leaves the results
// unpublished; the next publish (once the failure is gone) writes that report alone.
func TestWriterRetriesAfterError(t *testing.T) {
	t.Parallel()
	f := &fakeServer{}
	s := NewResults(nil)
	fill(s, []string{"a.js"}, 20, 2, Pass)
	w := newTestWriter(t, f, s, 0)
	f.fail.Store("jsinformer-a-js", true)
	if err := w.publish(t.Context()); err == nil {
		t.Fatal("publish with every apply of jsinformer-a-js failing: no error")
	}
	if w.Current() || w.Passes() != 0 {
		t.Fatalf("after a failed publish: current %v, passes %d", w.Current(), w.Passes())
	}
	f.fail.Delete("jsinformer-a-js")
	before := f.writes.Load()
	if err := w.publish(t.Context()); err != nil {
		t.Fatalf("publish: %v", err)
	}
	if !w.Current() || f.writes.Load()-before > 20 || w.Writes() != 20 {
		t.Errorf("after the retry: current %v, %d more writes, %d writes in all; want current and 20 in all",
			w.Current(), f.writes.Load()-before, w.Writes())
	}
}

// TestWriterPublishesChangedGroups: after one result changes, a publish writes its report
// alone; after a group empties its report is deleted; a listing (a ring change) compares
// every report again.
func TestWriterPublishesChangedGroups(t *testing.T) {
	t.Parallel()
	f := &fakeServer{}
	s := NewResults(nil)
	fill(s, []string{"a.js", "b.js"}, 10, 3, Pass)
	w := newTestWriter(t, f, s, 0)
	mustPublish := func(want int64, what string) {
		t.Helper()
		before := f.writes.Load()
		if err := w.publish(t.Context()); err != nil {
			t.Fatalf("%s: publish: %v", what, err)
		}
		if got := f.writes.Load() - before; got != want {
			t.Errorf("%s: %d writes, want %d", what, got, want)
		}
	}
	mustPublish(20, "first publish")
	s.Set("apps/v1/deployments|ns-3/d-1", Result{Script: "a.js", Result: Fail,
		Subject: Subject{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns-3", Name: "d-1", UID: "3-1"}})
	mustPublish(1, "one result changed")
	for i := range 3 {
		s.Delete("b.js", fmt.Sprintf("apps/v1/deployments|ns-4/d-%d", i))
	}
	mustPublish(1, "a group emptied")
	w.mu.Lock()
	for id, k := range w.known { // as if another replica had written them: differ from the results
		k.content = "other"
		w.known[id] = k
	}
	w.full = true
	w.mu.Unlock()
	mustPublish(19, "a listing")
}

// BenchmarkPublishOneChange publishes after one result changed among 60,000 in 384 groups
// (3 scripts, 128 namespaces), rebuilding only the changed group against every group (as
// every publish did before).
func BenchmarkPublishOneChange(b *testing.B) {
	f := &fakeServer{}
	s := NewResults(nil)
	fill(s, []string{"a.js", "b.js", "c.js"}, 128, 156, Pass)
	w := newTestWriter(b, f, s, 0)
	if err := w.publish(b.Context()); err != nil {
		b.Fatal(err)
	}
	i := 0
	change := func() {
		i++
		s.Set("apps/v1/deployments|ns-5/d-1", Result{Script: "a.js", Result: Outcomes[i%2],
			Subject: Subject{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns-5", Name: "d-1", UID: "5-1"}})
	}
	var changed, all time.Duration
	for b.Loop() {
		for _, full := range []bool{false, true} {
			change()
			w.full = full
			start := time.Now()
			if err := w.publish(b.Context()); err != nil {
				b.Fatal(err)
			}
			if full {
				all += time.Since(start)
			} else {
				changed += time.Since(start)
			}
		}
	}
	b.ReportMetric(float64(changed.Microseconds())/float64(b.N)/1000, "ms-changed-groups")
	b.ReportMetric(float64(all.Microseconds())/float64(b.N)/1000, "ms-every-group")
	b.ReportMetric(float64(all)/float64(changed), "ratio-every/changed")
}

// TestWriterSplitsAChangedGroup: a group growing past MaxResults is rewritten as parts and
// its whole report deleted, by a publish of that group alone; shrinking back, the reverse.
func TestWriterSplitsAChangedGroup(t *testing.T) {
	t.Parallel()
	f := &fakeServer{}
	s := NewResults(nil)
	fill(s, []string{"a.js", "b.js"}, 3, 300, Pass)
	w := newTestWriter(t, f, s, 0)
	names := func() []string {
		var out []string
		for _, id := range slices.SortedFunc(maps.Keys(w.known), compareIDs) {
			if id.Namespace == "ns-1" {
				out = append(out, id.Name)
			}
		}
		return out
	}
	publish := func(want int64, wantNames []string, what string) {
		t.Helper()
		before := f.writes.Load()
		if err := w.publish(t.Context()); err != nil {
			t.Fatalf("%s: publish: %v", what, err)
		}
		if got := f.writes.Load() - before; got != want {
			t.Errorf("%s: %d writes, want %d", what, got, want)
		}
		if got := names(); !slices.Equal(got, wantNames) {
			t.Errorf("%s: reports in ns-1 %q, want %q", what, got, wantNames)
		}
	}
	publish(6, []string{"jsinformer-a-js", "jsinformer-b-js"}, "first publish")
	key := func(i int) string { return fmt.Sprintf("apps/v1/deployments|ns-1/e-%d", i) }
	for i := range 300 {
		s.Set(key(i), Result{Script: "a.js", Result: Pass,
			Subject: Subject{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns-1", Name: fmt.Sprint("e-", i), UID: fmt.Sprint("e", i)}})
	}
	_, groups := s.Changed(0)
	var parts []string
	for id := range Build(groups[groupOf("a.js", "ns-1")].Results) {
		parts = append(parts, id.Name)
	}
	if len(parts) < 2 {
		t.Fatalf("600 results built into %q, want parts", parts)
	}
	// The parts applied, the whole report deleted.
	publish(int64(len(parts))+1, slices.Sorted(slices.Values(append(parts, "jsinformer-b-js"))), "a.js in ns-1 grown to 600")
	s.Set("apps/v1/deployments|ns-1/d-5", Result{Script: "a.js", Result: Fail,
		Subject: Subject{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns-1", Name: "d-5", UID: "1-5"}})
	publish(1, slices.Sorted(slices.Values(append(parts, "jsinformer-b-js"))), "one result of a part changed")
	for i := range 300 {
		s.Delete("a.js", key(i))
	}
	publish(int64(len(parts))+1, []string{"jsinformer-a-js", "jsinformer-b-js"}, "a.js in ns-1 back to 300")
}
