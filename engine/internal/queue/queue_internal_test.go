package queue

import (
	"fmt"
	"testing"
)

func TestQueueKeepsOrderAndDrainsAfterClose(t *testing.T) {
	t.Parallel()
	q := New[int]()
	const n = 5000
	go func() {
		for i := range n {
			q.Push(i)
		}
		q.Close()
	}()
	for want := 0; ; want++ {
		got, ok := q.Pop(nil)
		if !ok {
			if want != n {
				t.Fatalf("drained after %d items, want %d", want, n)
			}
			return
		}
		if got != want {
			t.Fatalf("pop = %d, want %d", got, want)
		}
	}
}

// TestQueueAcrossChunks interleaves bursts and partial drains so that chunks are linked,
// emptied, recycled as the spare or into a pool and reused, and checks FIFO order and len
// throughout. With a pool, two queues take turns on it, as a reload's new version takes the
// chunks its predecessor emptied.
func TestQueueAcrossChunks(t *testing.T) {
	t.Parallel()
	steps := []struct{ push, pop int }{{600, 300}, {600, 900}, {1, 1}, {ChunkSize, ChunkSize}, {3 * ChunkSize, 10}, {0, 3*ChunkSize - 10}}
	for _, pooled := range []bool{false, true} {
		t.Run(fmt.Sprintf("pooled=%v", pooled), func(t *testing.T) {
			t.Parallel()
			var pool Pool[int]
			for turn := range 2 {
				q := New[int]()
				if pooled {
					q = NewPooled(&pool)
				}
				next, want := 0, 0
				for _, step := range steps {
					for range step.push {
						q.Push(next)
						next++
					}
					for range step.pop {
						got, ok := q.Pop(nil)
						if !ok || got != want {
							t.Fatalf("turn %d: pop = %d, %v; want %d", turn, got, ok, want)
						}
						want++
					}
					if q.Len() != next-want {
						t.Fatalf("turn %d: len = %d, want %d", turn, q.Len(), next-want)
					}
				}
			}
		})
	}
}

// A pooled chunk comes back with no item left in it: the queue zeroes what it takes, so the
// pool holds no reference to an object a version was shown.
func TestQueuePoolHoldsNoItems(t *testing.T) {
	t.Parallel()
	var pool Pool[*int]
	q := NewPooled(&pool)
	for i := range 20 * ChunkSize { // many chunks: the race detector drops a share of Puts
		q.Push(&i)
	}
	for range 20 * ChunkSize {
		if _, ok := q.Pop(nil); !ok {
			t.Fatal("queue drained early")
		}
	}
	pooled := 0
	for c, ok := pool.p.Get().(*chunk[*int]); ok; c, ok = pool.p.Get().(*chunk[*int]) {
		pooled++
		if c.n != 0 || c.next != 0 || c.link != nil {
			t.Fatalf("pooled chunk n=%d next=%d link=%v, want an empty chunk", c.n, c.next, c.link != nil)
		}
		for i, item := range c.items {
			if item != nil {
				t.Fatalf("pooled chunk holds item %d", i)
			}
		}
	}
	if pooled == 0 {
		t.Fatal("no emptied chunk reached the pool")
	}
}

func TestQueueRefusesAfterCloseAndAborts(t *testing.T) {
	t.Parallel()
	q := New[int]()
	abort := make(chan struct{})
	close(abort)
	if _, ok := q.Pop(abort); ok {
		t.Fatal("pop on an empty queue returned an item after abort")
	}
	q.Push(2)
	if item, ok := q.Pop(abort); ok {
		t.Fatalf("pop after abort returned %d, queued before it: an aborted consumer takes nothing more", item)
	}
	q.Close()
	if q.Push(1) {
		t.Fatal("push after close accepted")
	}
}
