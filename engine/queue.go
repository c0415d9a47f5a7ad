package engine

import (
	"sync"
)

// queue is an unbounded FIFO between client-go's listener goroutines (producers) and one
// version's worker (the only consumer). Unbounded because a producer must never block: a
// blocked listener would stall nothing else in client-go, but a bounded queue would turn a
// slow script into lost ordering or dropped events.
type queue[T any] struct {
	mu     sync.Mutex
	items  []T
	head   int
	closed bool
	ready  chan struct{} // capacity 1: "items may be available"
}

func newQueue[T any]() *queue[T] {
	return &queue[T]{ready: make(chan struct{}, 1)}
}

// push appends an item; it reports false after close.
func (q *queue[T]) push(item T) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, item)
	q.mu.Unlock()
	q.signal()
	return true
}

func (q *queue[T]) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// close stops accepting items; pop drains what is left, then reports done.
func (q *queue[T]) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

// pop returns the next item, waiting for one; ok is false once closed and drained, or when
// abort is closed.
func (q *queue[T]) pop(abort <-chan struct{}) (item T, ok bool) {
	for {
		q.mu.Lock()
		if q.head < len(q.items) {
			item = q.items[q.head]
			var zero T
			q.items[q.head] = zero // drop the reference for the GC
			q.head++
			q.compact()
			q.mu.Unlock()
			return item, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return item, false
		}
		select {
		case <-q.ready:
		case <-abort:
			return item, false
		}
	}
}

// compact reclaims the consumed prefix once it dominates the slice; called with mu held.
func (q *queue[T]) compact() {
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
		return
	}
	if q.head > 1024 && q.head*2 > len(q.items) {
		q.items = append(q.items[:0:0], q.items[q.head:]...)
		q.head = 0
	}
}

// len is the number of waiting items.
func (q *queue[T]) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) - q.head
}
