package scripting

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestTimeout(t *testing.T) {
	t.Parallel()
	src := "export default {\n  onAdd(obj) {\n    if (obj.metadata.name === 'web') { while (true) {} }\n    globalThis.out = 'ok'\n  }\n}\n"
	s := newTestScript(t, "spin.js", src, Options{Timeout: 50 * time.Millisecond})
	start := time.Now()
	err := s.OnAdd(sample(), Event{})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("error = %v, want ErrTimeout", err)
	}
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Errorf("timeout took %v", elapsed)
	}
	var se *ScriptError
	if !errors.As(err, &se) || se.File != "spin.js" || se.Line != 3 || se.Message != "onAdd timed out after 50ms" {
		t.Errorf("error = %q (line %d), want spin.js:3 onAdd timed out after 50ms", err, se.Line)
	}
	// The runtime stays usable: the next call gets a fresh deadline.
	other := sample()
	other["metadata"] = map[string]any{"name": "other"}
	if err := s.OnAdd(other, Event{}); err != nil {
		t.Fatalf("call after timeout: %v", err)
	}
	if got := outJSON(t, s); got != `"ok"` {
		t.Errorf("out = %s", got)
	}
}

func TestTimeoutCannotBeCaught(t *testing.T) {
	t.Parallel()
	src := `export default { onAdd() { try { for (;;) {} } catch (e) { globalThis.out = "caught" } finally { globalThis.out = "finally" } } }`
	s := newTestScript(t, "c.js", src, Options{Timeout: 20 * time.Millisecond})
	if err := s.OnAdd(sample(), Event{}); !errors.Is(err, ErrTimeout) {
		t.Fatalf("error = %v, want ErrTimeout", err)
	}
	if got := outJSON(t, s); got != "undefined" {
		t.Errorf("out = %s: the timeout was observed by the script", got)
	}
}

func TestInterrupt(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "i.js", `export default { onAdd() { globalThis.started = true; for (;;) {} }, onDelete() {} }`,
		Options{Timeout: time.Minute})
	done := make(chan error, 1)
	go func() { done <- s.OnAdd(sample(), Event{}) }()
	// Interrupt is for other goroutines; wait until the call is certainly running JS. The
	// runtime belongs to the calling goroutine, so poll the watchdog, not the runtime.
	waitFor(t, "call to start", func() bool {
		dog := current(s).dog
		dog.mu.Lock()
		defer dog.mu.Unlock()
		return dog.active
	})
	s.Interrupt()
	err := <-done
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("error = %v, want ErrInterrupted", err)
	}
	for _, call := range []func() error{
		func() error { return s.OnAdd(sample(), Event{}) },
		func() error { return s.OnDelete(sample(), Event{}) },
		func() error { _, err := s.Reconcile("x", Event{}); return err },
	} {
		if err := call(); !errors.Is(err, ErrInterrupted) {
			t.Errorf("later call error = %v, want ErrInterrupted", err)
		}
	}
}

func TestInterruptBeforeCall(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "i.js", `export default { onAdd() { globalThis.out = "ran" } }`, Options{})
	s.Interrupt()
	s.Interrupt() // idempotent
	err := s.OnAdd(sample(), Event{})
	var se *ScriptError
	if !errors.Is(err, ErrInterrupted) || !errors.As(err, &se) {
		t.Fatalf("error = %v, want *ScriptError wrapping ErrInterrupted", err)
	}
	if got := err.Error(); got != "i.js: onAdd: script interrupted" {
		t.Errorf("error = %q", got)
	}
}

func TestStackOverflow(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "so.js", `function f(n) { return f(n + 1) + 1 }
export default { onAdd() { f(0) } }`, Options{})
	err := s.OnAdd(sample(), Event{})
	if err == nil || !strings.Contains(err.Error(), "so.js:1:") || !strings.Contains(err.Error(), "call stack size exceeded") {
		t.Fatalf("error = %v", err)
	}
	// The stack keeps its first 20 and last 5 frames.
	var se *ScriptError
	errors.As(err, &se)
	lines := strings.Split(se.Stack, "\n")
	if len(lines) != stackHead+1+stackTail || !strings.HasPrefix(lines[stackHead], "... ") ||
		!strings.HasSuffix(lines[stackHead], " frames omitted ...") || !strings.Contains(lines[len(lines)-1], "at onAdd (so.js:2:") {
		t.Errorf("stack has %d lines (%d bytes):\n%s", len(lines), len(se.Stack), strings.Join(lines[:min(len(lines), 30)], "\n"))
	}
}

func TestThrownValues(t *testing.T) {
	t.Parallel()
	tests := []struct{ throw, want string }{
		{`new TypeError("t")`, "TypeError: t"},
		{`"text"`, "text"},
		{`42`, "42"},
		{`{code: 1, why: "x"}`, `{"code":1,"why":"x"}`},
		{`null`, "null"},
		{`{toString() { throw new Error("nested") }, toJSON() { throw new Error("nested") }}`, "<exception that cannot be printed>"},
	}
	for _, tt := range tests {
		t.Run(tt.throw, func(t *testing.T) {
			t.Parallel()
			s := newTestScript(t, "th.js", "export default { onAdd() { throw "+tt.throw+" } }", Options{})
			err := s.OnAdd(sample(), Event{})
			var se *ScriptError
			if !errors.As(err, &se) || se.Message != tt.want {
				t.Errorf("error = %v, want message %q", err, tt.want)
			}
		})
	}
}

type panicky struct{}

func (panicky) MarshalJSON() ([]byte, error) { panic("bad marshaler") }

func TestPanicConvertingGoValue(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "pv.js", `export default { onAdd(o) { globalThis.out = typeof o.bad } }`, Options{})
	err := s.OnAdd(Object{"bad": panicky{}}, Event{})
	if !errors.Is(err, ErrPanic) {
		t.Fatalf("error = %v, want ErrPanic", err)
	}
	if err := s.OnAdd(Object{"bad": "fine"}, Event{}); err != nil {
		t.Fatalf("call after panic: %v", err)
	}
	if got := outJSON(t, s); got != `"string"` {
		t.Errorf("out = %s", got)
	}
}

// TestNoStaleInterrupts alternates timed-out and quick calls: a deadline must never leak into
// the next call.
func TestNoStaleInterrupts(t *testing.T) {
	t.Parallel()
	// A stale interrupt is the previous call's timer firing late: it lands less than the
	// timeout into the next call. A quick call that a loaded machine really held for its whole
	// deadline (CI saw one at load 4 under -race) is not one, and is only tolerated as such.
	const timeout = 100 * time.Millisecond
	s := newTestScript(t, "st.js", `export default { onAdd(o) { if (o.spin) for (;;) {} } }`, Options{Timeout: timeout})
	for i := range 20 {
		if err := s.OnAdd(Object{"spin": true}, Event{}); !errors.Is(err, ErrTimeout) {
			t.Fatalf("round %d: spinning call error = %v, want ErrTimeout", i, err)
		}
		for range 50 {
			start := time.Now()
			err := s.OnAdd(Object{"spin": false}, Event{})
			if took := time.Since(start); err != nil && (!errors.Is(err, ErrTimeout) || took < timeout) {
				t.Fatalf("round %d: quick call error after %s = %v", i, took, err)
			}
		}
	}
}
