package inspect_test

import (
	"errors"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/engine/internal/inspect"
)

// A key stays in the book while queued, retrying or requeued, and leaves when a run succeeds
// or the reconciler gives up on it.
func TestKeyBookLifecycle(t *testing.T) {
	t.Parallel()
	failed := errors.New("boom")
	tests := []struct {
		name         string
		err          error
		attempt      int
		gaveUp       bool
		requeueAfter time.Duration
		wantKept     bool
		wantReason   string
	}{
		{"success leaves", nil, 1, false, 0, false, ""},
		{"failure retries", failed, 3, false, 0, true, "retry after error"},
		{"giving up leaves", failed, 5, true, 0, false, ""},
		{"requeueAfter stays", nil, 1, false, 30 * time.Second, true, "requeueAfter 30s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := inspect.NewKeyBook()
			b.Queued("ns/a", "add of v1/configmaps ns/a")
			b.Started("ns/a")
			if s := b.Snapshot(time.Now()); len(s) != 1 || !s[0].Running {
				t.Fatalf("while running the book holds %+v, want ns/a running", s)
			}
			before := time.Now()
			b.Finished("ns/a", tt.err, tt.attempt, tt.gaveUp, tt.requeueAfter)
			if b.Has("ns/a") != tt.wantKept {
				t.Fatalf("book has ns/a = %v, want %v", b.Has("ns/a"), tt.wantKept)
			}
			if !tt.wantKept {
				return
			}
			k := b.Snapshot(time.Now())[0]
			if k.Running || k.Reason != tt.wantReason || k.NextRetry == nil || k.NextRetry.Before(before) {
				t.Errorf("after the run: %+v, want not running, reason %q and a next retry", k, tt.wantReason)
			}
			if tt.err != nil && (k.Attempts != tt.attempt || k.LastError != tt.err.Error()) {
				t.Errorf("attempts %d, last error %q; want %d and %q", k.Attempts, k.LastError, tt.attempt, tt.err)
			}
		})
	}
}

// A paused script's Wait holds until Resume, or gives up when its version stops; a nil Pauses
// holds nothing.
func TestPausesHoldUntilResumedOrAborted(t *testing.T) {
	t.Parallel()
	p := inspect.NewPauses()
	if !p.Pause("s.js") || p.Pause("s.js") {
		t.Fatal("Pause must report true the first time and false when already paused")
	}
	waited := make(chan bool, 1)
	go func() { waited <- p.Wait("s.js", nil) }()
	select {
	case <-waited:
		t.Fatal("Wait returned while the script is paused")
	case <-time.After(50 * time.Millisecond): // a Wait that does not hold returns at once
	}
	if !p.Resume("s.js") || p.Resume("s.js") || p.Paused("s.js") {
		t.Fatal("Resume must report true once, and the script must no longer be paused")
	}
	if ok := <-waited; !ok {
		t.Error("Wait reported an abort after a resume")
	}
	p.Pause("t.js")
	abort := make(chan struct{})
	close(abort)
	if p.Wait("t.js", abort) {
		t.Error("Wait reported a resume when the version stopped")
	}
	var none *inspect.Pauses
	if none.Paused("s.js") || !none.Wait("s.js", nil) {
		t.Error("a nil Pauses must hold nothing")
	}
}
