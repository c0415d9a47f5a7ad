package audit

import (
	"sync"
	"testing"
	"time"
)

// TestKeyQueue: first in, first out, each key once; a key added while processed comes back
// after done; idle only with nothing queued nor processing; shutdown wakes a waiting get.
func TestKeyQueue(t *testing.T) {
	t.Parallel()
	q := newKeyQueue()
	if !q.idle() {
		t.Fatal("a new queue is not idle")
	}
	for _, k := range []string{"a", "b", "a", "c"} {
		q.add(k)
	}
	var got []string
	for range 3 {
		k, ok := q.get()
		if !ok {
			t.Fatal("get on a queue holding keys: shut down")
		}
		got = append(got, k)
		if k == "b" {
			q.add("b") // changed while audited: audited again after
			if q.idle() {
				t.Error("idle while b is processed")
			}
		}
		q.done(k)
	}
	if want := "a b c"; got[0]+" "+got[1]+" "+got[2] != want {
		t.Errorf("order %v, want %s", got, want)
	}
	if k, ok := q.get(); !ok || k != "b" {
		t.Errorf("after done, the key added meanwhile: %q %v, want b", k, ok)
	}
	if q.idle() {
		t.Error("idle while b is processed again")
	}
	q.done("b")
	if !q.idle() {
		t.Error("not idle with nothing queued nor processing")
	}
	var wg sync.WaitGroup
	ended := make(chan bool, 1)
	wg.Go(func() { _, ok := q.get(); ended <- ok })
	select {
	case <-ended:
		t.Fatal("get returned on an empty queue")
	case <-time.After(20 * time.Millisecond):
	}
	q.shutdown()
	wg.Wait()
	if ok := <-ended; ok {
		t.Error("get after shutdown returned a key")
	}
	q.add("x")
	if _, ok := q.get(); ok || !q.idle() {
		t.Error("a shut-down queue took a key")
	}
}
