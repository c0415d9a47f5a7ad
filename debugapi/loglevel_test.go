package debugapi

import (
	"log/slog"
	"sync"
	"testing"
	"time"
)

// fakeTimers hands out timers that fire only when the test says.
type fakeTimers struct {
	mu    sync.Mutex
	fires []func()
}

type fakeTimer struct{}

// Stop reports false, as a timer that has fired already does: the race the tests play.
func (fakeTimer) Stop() bool { return false }

func (f *fakeTimers) afterFunc(_ time.Duration, fn func()) interface{ Stop() bool } {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fires = append(f.fires, fn)
	return fakeTimer{}
}

func (f *fakeTimers) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.fires)
}

func newTestOverride() (*levelOverride, *slog.LevelVar, *fakeTimers) {
	v := &slog.LevelVar{}
	v.Set(slog.LevelInfo)
	o := newLevelOverride(v, slog.New(slog.DiscardHandler))
	timers := &fakeTimers{}
	o.afterFunc = timers.afterFunc
	return o, v, timers
}

func TestLevelOverride(t *testing.T) {
	t.Parallel()
	t.Run("an old timer firing late does not cancel the new override", func(t *testing.T) {
		t.Parallel()
		o, v, timers := newTestOverride()
		mustSet(t, o, "debug")
		mustSet(t, o, "warn") // the first timer fired already: Stop could not stop it
		timers.fires[0]()     // its revert runs now, after the second set
		if got := v.Level(); got != slog.LevelWarn {
			t.Fatalf("level %s after the first override's timer, want WARN (the second override)", got)
		}
		timers.fires[1]()
		if got := v.Level(); got != slog.LevelInfo {
			t.Fatalf("level %s after the second override's timer, want INFO (the original)", got)
		}
	})
	t.Run("stop reverts now and no later change starts a timer", func(t *testing.T) {
		t.Parallel()
		o, v, timers := newTestOverride()
		mustSet(t, o, "debug")
		o.stop()
		if got := v.Level(); got != slog.LevelInfo {
			t.Fatalf("level %s after stop, want INFO", got)
		}
		if _, err := o.set("debug", time.Minute); err == nil {
			t.Fatal("set after stop succeeded, want an error")
		}
		if n := timers.count(); n != 1 {
			t.Fatalf("%d timers started, want 1 (none after stop)", n)
		}
		if got := v.Level(); got != slog.LevelInfo {
			t.Fatalf("level %s after a set following stop, want INFO", got)
		}
	})
}

func mustSet(t *testing.T, o *levelOverride, level string) {
	t.Helper()
	if _, err := o.set(level, time.Minute); err != nil {
		t.Fatal(err)
	}
}
