package sharding

import (
	"context"
	"sync"
	"testing"
	"time"
)

// runMember runs m until the test ends, and waits until it handles key.
func runMember(t *testing.T, m *Member, key string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { m.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for !m.Handles(key) {
		if time.Now().After(deadline) {
			t.Fatalf("%s never handled %s", m.Identity(), key)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// callLoad calls Begin and end on keys at about rate calls per second for d, and returns how
// many calls it made.
func callLoad(m *Member, keys []string, rate int, d time.Duration) int {
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	n := 0
	for stop := time.Now().Add(d); time.Now().Before(stop); n++ {
		if end, ok := m.Begin(keys[n%len(keys)]); ok {
			end()
		}
		<-tick.C
	}
	return n
}

// Handler calls do not renew the Lease: under a steady load the member writes it once per
// retry period, as when idle.
func TestCallsDoNotRenewTheLease(t *testing.T) {
	t.Parallel()
	store := newFakeLeases()
	const retry = 200 * time.Millisecond
	m := New(Config{Name: "ring", Identity: "a", LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second,
		RetryPeriod: retry, DrainTimeout: time.Second}, store, nil)
	keys := []string{"ns/a", "ns/b", "ns/c"}
	runMember(t, m, keys[0])
	before := store.written(m.lease)
	start := time.Now()
	calls := callLoad(m, keys, 1000, time.Second)
	writes, took := store.written(m.lease)-before, time.Since(start)
	t.Logf("%d calls in %v: %d Lease writes", calls, took.Round(time.Millisecond), writes)
	if limit := int(took/retry) + 2; writes > limit {
		t.Errorf("%d Lease writes during %d calls in %v, want at most %d (one per retry period)", writes, calls, took, limit)
	}
}

// The end of the last call on a key that moves away wakes Run, so the member records the
// ring drained at once; the end of a call on a key it keeps does not.
func TestEndWakesOnlyADrain(t *testing.T) {
	t.Parallel()
	r := newTestRing(t, 200)
	a := r.join("a")
	r.settle(5 * time.Second)
	var moving, staying string
	for _, k := range r.keys {
		if (Ring{"a", "b"}).Owner(k) == "b" {
			moving = k
		} else {
			staying = k
		}
	}
	endMoving, ok1 := a.Begin(moving)
	endStaying, ok2 := a.Begin(staying)
	if !ok1 || !ok2 {
		t.Fatal("a does not handle its keys")
	}
	r.join("b")
	r.step()
	r.step()
	endStaying()
	if len(a.wake) != 0 {
		t.Error("the end of a call on a kept key woke the member")
	}
	endMoving()
	if len(a.wake) != 1 {
		t.Error("the end of the last call on a moving key did not wake the member")
	}
}
