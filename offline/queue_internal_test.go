package offline

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// The virtual queue keeps client-go's workqueue semantics and knows when it is quiet.
func TestQueueSemantics(t *testing.T) {
	t.Parallel()
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	q := newQueue(clk)
	q.Add("a")
	q.Add("a") // deduplicated while queued
	q.Add("b")
	if q.Len() != 2 || q.quiet() {
		t.Fatalf("len %d, quiet %v; want 2 queued keys", q.Len(), q.quiet())
	}
	k, _ := q.Get()
	if k != "a" || q.quiet() {
		t.Fatalf("got %q, quiet %v; want a, busy while it is reconciled", k, q.quiet())
	}
	q.Add("a") // added while being reconciled: queued again once done, not handed out now
	if q.Len() != 1 {
		t.Fatalf("len %d while a is reconciled, want only b queued", q.Len())
	}
	q.Done("a")
	if q.Len() != 2 {
		t.Fatalf("len %d after Done(a), want b and a again", q.Len())
	}
	for _, want := range []string{"b", "a"} {
		if k, _ := q.Get(); k != want {
			t.Fatalf("got %q, want %q", k, want)
		}
		q.Done(want)
	}
	if !q.quiet() {
		t.Fatal("not quiet with nothing queued or reconciled")
	}

	q.AddAfter("late", time.Minute)
	if due, ok := q.next(); !ok || !due.Equal(time.Unix(60, 0)) || q.Len() != 0 {
		t.Fatalf("next %v %v, len %d; want due at 1m and nothing queued yet", due, ok, q.Len())
	}
	clk.Step(59 * time.Second)
	q.fire(clk.Now())
	if q.Len() != 0 {
		t.Fatal("a delayed key was queued before its time")
	}
	clk.Step(time.Second)
	q.fire(clk.Now())
	if k, _ := q.Get(); k != "late" {
		t.Fatalf("got %q, want the delayed key at its time", k)
	}
	q.Done("late")

	q.Add("last")
	q.ShutDown()
	if k, quit := q.Get(); k != "last" || quit {
		t.Fatalf("after ShutDown got %q %v; want the queued key first", k, quit)
	}
	q.Done("last")
	if _, quit := q.Get(); !quit {
		t.Fatal("Get did not quit once shut down and empty")
	}
	q.Add("ignored")
	if q.Len() != 0 {
		t.Fatal("a key was added after ShutDown")
	}
}

// A fired timer counts as pending until its owner resets or stops it.
func TestTimerPendingUntilReset(t *testing.T) {
	t.Parallel()
	c := newVirtualClock(clocktesting.NewFakeClock(time.Unix(0, 0)))
	tm := c.NewTimer(time.Minute)
	if due, ok := c.nextTimer(); !ok || !due.Equal(time.Unix(60, 0)) {
		t.Fatalf("next timer %v %v, want 1m", due, ok)
	}
	c.SetTime(time.Unix(60, 0))
	c.fire()
	if c.quiet() {
		t.Fatal("quiet with a fired timer not yet handled")
	}
	if got := <-tm.C(); !got.Equal(time.Unix(60, 0)) {
		t.Fatalf("fired at %v, want 1m", got)
	}
	tm.Reset(time.Minute)
	if !c.quiet() {
		t.Fatal("not quiet once the timer was reset")
	}
	tm.Stop()
	if _, ok := c.nextTimer(); ok {
		t.Fatal("a stopped timer is still armed")
	}
}
