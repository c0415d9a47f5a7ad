package scripting

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/dop251/goja"
)

// A real built-in the interrupt cannot reach: a backreference sends goja to regexp2, whose
// backtracking on (a+)+ doubles with every "a" and never looks at the runtime's interrupt.
const stuckRegexp = `/^(a+)+\1$/.test("a".repeat(%d) + "b")`

// stuckExpr returns a JS expression that runs for about d inside one Go built-in, calibrated
// on this machine (and under -race, which slows goja too).
func stuckExpr(t *testing.T, d time.Duration) string {
	t.Helper()
	n, took := 14, time.Duration(0)
	for took < 20*time.Millisecond {
		n++
		rt := goja.New()
		start := time.Now()
		if _, err := rt.RunString(fmt.Sprintf(stuckRegexp, n)); err != nil {
			t.Fatal(err)
		}
		took = time.Since(start)
	}
	n += int(math.Ceil(math.Log2(float64(d) / float64(took))))
	return fmt.Sprintf(stuckRegexp, n)
}

func named(name string) Object {
	obj := sample()
	obj["metadata"] = map[string]any{"name": name}
	return obj
}

func TestStuckCallIsAbandoned(t *testing.T) {
	t.Parallel()
	const stuckFor = 1500 * time.Millisecond
	src := `let calls = 0;
export default { onAdd(obj) { calls++; globalThis.out = calls; if (obj.metadata.name === "stuck") ` + stuckExpr(t, stuckFor) + ` } }`
	rec := newLogRecorder()
	opts := Options{Timeout: 50 * time.Millisecond, Grace: 200 * time.Millisecond, Logger: slog.New(rec)}
	s := newTestScript(t, "stuck.js", src, opts)
	defer s.Close()
	if err := s.OnAdd(named("a"), Event{}); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	err := s.OnAdd(named("stuck"), Event{})
	took := time.Since(start)
	if !errors.Is(err, ErrStuck) {
		t.Fatalf("error = %v, want ErrStuck", err)
	}
	if took > opts.Timeout+opts.Grace+time.Second {
		t.Errorf("the stuck call held its caller for %v, want about %v", took, opts.Timeout+opts.Grace)
	}
	if n := s.stuck.Load(); n != 1 {
		t.Fatalf("stuck runtimes = %d right after the call returned, want 1 (the built-in still runs)", n)
	}
	if !hasLog(rec, "script call stuck; abandoned its runtime") {
		t.Error("the stuck call was not logged")
	}

	// The next event runs on a fresh runtime: module state starts again.
	if err := s.OnAdd(named("b"), Event{}); err != nil {
		t.Fatalf("call after the stuck one: %v", err)
	}
	if got := outJSON(t, s); got != "1" {
		t.Errorf("calls in the fresh runtime = %s, want 1", got)
	}

	// The abandoned goroutine ends when its built-in does, and says so.
	deadline := time.Now().Add(10 * stuckFor)
	for s.stuck.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the abandoned runtime never finished")
		}
		time.Sleep(10 * time.Millisecond)
	}
	waitFor(t, "the finish log", func() bool { return hasLog(rec, "abandoned script runtime has finished its call") })
}

func TestInterruptReleasesStuckCall(t *testing.T) {
	t.Parallel()
	src := `export default { onAdd() { ` + stuckExpr(t, 2*time.Second) + ` } }`
	s := newTestScript(t, "stuck.js", src, Options{Timeout: time.Minute, Grace: 100 * time.Millisecond})
	done := make(chan error, 1)
	go func() { done <- s.OnAdd(named("x"), Event{}) }()
	waitFor(t, "call to start", func() bool {
		dog := current(s).dog
		dog.mu.Lock()
		defer dog.mu.Unlock()
		return dog.active
	})
	start := time.Now()
	s.Interrupt()
	select {
	case err := <-done:
		if !errors.Is(err, ErrStuck) {
			t.Errorf("error = %v, want ErrStuck", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the interrupted call did not return")
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("returned %v after Interrupt, want about the 100ms grace", took)
	}
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(time.Second):
		t.Fatal("Close waited for the abandoned runtime")
	}
	if err := s.OnAdd(named("x"), Event{}); !errors.Is(err, ErrInterrupted) {
		t.Errorf("call after Interrupt = %v, want ErrInterrupted", err)
	}
}

func TestStuckRuntimesAreCapped(t *testing.T) {
	t.Parallel()
	src := `export default { onAdd() { ` + stuckExpr(t, 2*time.Second) + ` } }`
	s := newTestScript(t, "stuck.js", src, Options{Timeout: 20 * time.Millisecond, Grace: 50 * time.Millisecond})
	defer s.Close()
	for i := range maxStuck {
		if err := s.OnAdd(named("x"), Event{}); !errors.Is(err, ErrStuck) {
			t.Fatalf("call %d: error = %v, want ErrStuck", i, err)
		}
	}
	start := time.Now()
	err := s.OnAdd(named("x"), Event{})
	if !errors.Is(err, ErrStuck) || time.Since(start) > 500*time.Millisecond {
		t.Fatalf("call with %d runtimes stuck = %v after %v, want an immediate ErrStuck", maxStuck, err, time.Since(start))
	}
	if current(s) != nil {
		t.Error("a runtime was started although the cap was reached")
	}
}

func TestStuckModuleFailsInstantiate(t *testing.T) {
	t.Parallel()
	src := stuckExpr(t, 2*time.Second) + `; export default { onAdd() {} }`
	start := time.Now()
	_, err := instantiate("stuck.js", src, Options{Timeout: 20 * time.Millisecond, Grace: 50 * time.Millisecond})
	if !errors.Is(err, ErrStuck) {
		t.Fatalf("error = %v, want ErrStuck", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("Instantiate took %v", took)
	}
}

func hasLog(rec *logRecorder, msg string) bool {
	for _, r := range rec.all() {
		if r.Msg == msg {
			return true
		}
	}
	return false
}
