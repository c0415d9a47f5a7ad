package engine

import (
	"sync"
)

// queue is an unbounded FIFO between client-go's listener goroutines (producers) and one
// version's worker (the only consumer). Unbounded because a producer must never block: a
// blocked listener would stall nothing else in client-go, but a bounded queue would turn a
// slow script into lost ordering or dropped events.
//
// Items live in fixed-size chunks linked head to tail. A reload pushes a whole cache through
// in one burst; chunks let the queue grow without copying what it holds, and the consumer
// hands each emptied chunk back for reuse, so a steady stream allocates nothing. A queue with
// a pool (the versions' event queues share one) hands emptied chunks past its one spare to
// the pool: a reload's burst then runs through the chunks the last reload's burst emptied
// instead of allocating and zeroing new ones (two queues of a 20,000-object cache are ~5 MB).
type queue[T any] struct {
	mu     sync.Mutex
	head   *chunk[T] // popped from at head.next
	tail   *chunk[T] // pushed to at tail.n
	spare  *chunk[T] // one emptied chunk kept for the next push that needs one
	size   int
	closed bool
	ready  chan struct{} // capacity 1: "items may be available"
	// waiting: the consumer is blocked in pop on an empty queue, so it has finished with
	// every item it took. The offline harness reads it (idle) to know a version is quiet.
	waiting bool
	// over is the overload policy (coalesce.go), nil for none; called with mu held.
	over overflow[T]
	// pool holds emptied *chunk[T]s for any queue sharing it; nil for none.
	pool *sync.Pool
}

// overflow is what a queue asks its overload policy: whether an item is folded into one
// queued (offer, before a put), and where items are put and taken from, so it can find them.
type overflow[T any] interface {
	offer(q *queue[T], item T) bool
	put(slot *T)
	take(q *queue[T], slot *T)
}

// chunkSize items per chunk: big enough that linking is rare, small enough that an idle
// version holds little.
const chunkSize = 256

type chunk[T any] struct {
	items [chunkSize]T
	n     int // items written
	next  int // items read
	link  *chunk[T]
}

func newQueue[T any]() *queue[T] {
	c := &chunk[T]{}
	return &queue[T]{head: c, tail: c, ready: make(chan struct{}, 1)}
}

// eventChunks is the chunk pool of every version's event queues (newEventQueue).
var eventChunks sync.Pool

// newEventQueue is a version's event queue: its chunks come from and go back to eventChunks.
func newEventQueue() *queue[event] {
	q := newQueue[event]()
	q.pool = &eventChunks
	return q
}

// push appends an item; it reports false after close.
func (q *queue[T]) push(item T) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.add(item)
	q.mu.Unlock()
	q.signal()
	return true
}

// pushAll appends items in order, as one push each; it reports false after close.
func (q *queue[T]) pushAll(items []T) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	for _, item := range items {
		q.add(item)
	}
	q.mu.Unlock()
	q.signal()
	return true
}

// add appends item, unless the overload policy folds it into one queued; called with mu held.
func (q *queue[T]) add(item T) {
	if q.over == nil {
		q.put(item)
		return
	}
	if !q.over.offer(q, item) {
		q.over.put(q.put(item))
	}
}

// put appends item at the tail, linking a chunk when the tail is full, and returns its slot,
// which stays put until taken; called with mu held.
func (q *queue[T]) put(item T) *T {
	if q.tail.n == chunkSize {
		q.tail.link = q.newChunk()
		q.tail = q.tail.link
	}
	slot := &q.tail.items[q.tail.n]
	*slot = item
	q.tail.n++
	q.size++
	return slot
}

// newChunk returns the spare chunk or a new one; called with mu held.
func (q *queue[T]) newChunk() *chunk[T] {
	if c := q.spare; c != nil {
		q.spare = nil
		return c
	}
	if q.pool != nil {
		if c, ok := q.pool.Get().(*chunk[T]); ok {
			return c
		}
	}
	return &chunk[T]{}
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

// pop returns the next item, waiting for one; ok is false once closed and drained, or as soon
// as abort is closed, items left or not: an aborted consumer takes nothing more.
func (q *queue[T]) pop(abort <-chan struct{}) (item T, ok bool) {
	for {
		select {
		case <-abort:
			return item, false
		default:
		}
		q.mu.Lock()
		q.waiting = false
		if q.size > 0 {
			item = q.take()
			q.mu.Unlock()
			return item, true
		}
		closed := q.closed
		q.waiting = !closed
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

// popBatch waits like pop for an item, then appends to buf it and up to limit-1 more that are
// already waiting. It returns buf unchanged once closed and drained, or on abort.
func (q *queue[T]) popBatch(abort <-chan struct{}, buf []T, limit int) []T {
	item, ok := q.pop(abort)
	if !ok {
		return buf
	}
	buf = append(buf, item)
	q.mu.Lock()
	for len(buf) < limit && q.size > 0 {
		buf = append(buf, q.take())
	}
	q.mu.Unlock()
	return buf
}

// take removes the head item; called with mu held and size > 0.
func (q *queue[T]) take() T {
	h := q.head
	if h.next == chunkSize {
		q.head = h.link
		h.n, h.next, h.link = 0, 0, nil // its items were zeroed as they were taken
		q.recycle(h)
		h = q.head
	}
	item := h.items[h.next]
	q.size--
	if q.over != nil {
		q.over.take(q, &h.items[h.next])
	}
	var zero T
	h.items[h.next] = zero // drop the reference for the GC
	h.next++
	if q.size == 0 && h == q.tail {
		h.n, h.next = 0, 0 // empty: reuse the chunk from its start
	}
	return item
}

// recycle keeps the emptied chunk c as the spare, or gives it to the pool when there is a
// spare already; called with mu held. c's items are all zero (take zeroes them).
func (q *queue[T]) recycle(c *chunk[T]) {
	switch {
	case q.spare == nil:
		q.spare = c
	case q.pool != nil:
		q.pool.Put(c)
	}
}

// idle reports that the queue is empty and its consumer is waiting for the next item.
func (q *queue[T]) idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.size == 0 && q.waiting
}

// len is the number of waiting items.
func (q *queue[T]) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.size
}
