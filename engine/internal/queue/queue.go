package queue

import (
	"sync"
)

// Queue is an unbounded FIFO between client-go's listener goroutines (producers) and one
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
type Queue[T any] struct {
	mu     sync.Mutex
	head   *chunk[T] // popped from at head.next
	tail   *chunk[T] // pushed to at tail.n
	spare  *chunk[T] // one emptied chunk kept for the next push that needs one
	size   int
	closed bool
	ready  chan struct{} // capacity 1: "items may be available"
	// waiting: the consumer is blocked in Pop on an empty queue, so it has finished with
	// every item it took. The offline harness reads it (Idle) to know a version is quiet.
	waiting bool
	// over is the overload policy (package engine/internal/coalesce), nil for none; called
	// with mu held.
	over Overflow[T]
	// pool holds emptied chunks for any queue sharing it; nil for none.
	pool *Pool[T]
}

// Overflow is what a queue asks its overload policy: whether an item is folded into one
// queued (Offer, before a put), and where items are put and taken from, so it can find them.
// Every method is called with the queue's lock held; q is the queue as seen under that lock.
type Overflow[T any] interface {
	Offer(q Locked[T], item T) bool
	Put(slot *T)
	Take(q Locked[T], slot *T)
}

// Locked is a queue as its overflow policy sees it, with the queue's lock held by the caller.
type Locked[T any] struct{ q *Queue[T] }

// Len is the number of queued items.
func (l Locked[T]) Len() int { return l.q.size }

// Slots calls yield with the slot of every queued item, oldest first, until it returns false.
func (l Locked[T]) Slots(yield func(slot *T) bool) {
	for ch := l.q.head; ch != nil; ch = ch.link {
		for i := ch.next; i < ch.n; i++ { // a chunk is linked only once full, so this is in order
			if !yield(&ch.items[i]) {
				return
			}
		}
	}
}

// ChunkSize items per chunk: big enough that linking is rare, small enough that an idle
// version holds little. Producers pushing a burst push it in batches of this size.
const ChunkSize = 256

type chunk[T any] struct {
	items [ChunkSize]T
	n     int // items written
	next  int // items read
	link  *chunk[T]
}

// Pool is a pool of emptied chunks that queues of T share (NewPooled). The zero Pool is
// ready to use.
type Pool[T any] struct{ p sync.Pool }

// New is an empty queue with no pool and no overflow policy.
func New[T any]() *Queue[T] {
	c := &chunk[T]{}
	return &Queue[T]{head: c, tail: c, ready: make(chan struct{}, 1)}
}

// NewPooled is an empty queue whose chunks come from and go back to pool.
func NewPooled[T any](pool *Pool[T]) *Queue[T] {
	q := New[T]()
	q.pool = pool
	return q
}

// SetOverflow sets the queue's overload policy; call it before the queue is shared.
func (q *Queue[T]) SetOverflow(o Overflow[T]) { q.over = o }

// Push appends an item; it reports false after Close.
func (q *Queue[T]) Push(item T) bool {
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

// PushAll appends items in order, as one Push each; it reports false after Close.
func (q *Queue[T]) PushAll(items []T) bool {
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
func (q *Queue[T]) add(item T) {
	if q.over == nil {
		q.put(item)
		return
	}
	if !q.over.Offer(Locked[T]{q}, item) {
		q.over.Put(q.put(item))
	}
}

// put appends item at the tail, linking a chunk when the tail is full, and returns its slot,
// which stays put until taken; called with mu held.
func (q *Queue[T]) put(item T) *T {
	if q.tail.n == ChunkSize {
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
func (q *Queue[T]) newChunk() *chunk[T] {
	if c := q.spare; c != nil {
		q.spare = nil
		return c
	}
	if q.pool != nil {
		if c, ok := q.pool.p.Get().(*chunk[T]); ok {
			return c
		}
	}
	return &chunk[T]{}
}

func (q *Queue[T]) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// Close stops accepting items; Pop drains what is left, then reports done.
func (q *Queue[T]) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

// Pop returns the next item, waiting for one; ok is false once closed and drained, or as soon
// as abort is closed, items left or not: an aborted consumer takes nothing more.
func (q *Queue[T]) Pop(abort <-chan struct{}) (item T, ok bool) {
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

// PopBatch waits like Pop for an item, then appends to buf it and up to limit-1 more that are
// already waiting. It returns buf unchanged once closed and drained, or on abort.
func (q *Queue[T]) PopBatch(abort <-chan struct{}, buf []T, limit int) []T {
	item, ok := q.Pop(abort)
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
func (q *Queue[T]) take() T {
	h := q.head
	if h.next == ChunkSize {
		q.head = h.link
		h.n, h.next, h.link = 0, 0, nil // its items were zeroed as they were taken
		q.recycle(h)
		h = q.head
	}
	item := h.items[h.next]
	q.size--
	if q.over != nil {
		q.over.Take(Locked[T]{q}, &h.items[h.next])
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
func (q *Queue[T]) recycle(c *chunk[T]) {
	switch {
	case q.spare == nil:
		q.spare = c
	case q.pool != nil:
		q.pool.p.Put(c)
	}
}

// Idle reports that the queue is empty and its consumer is waiting for the next item.
func (q *Queue[T]) Idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.size == 0 && q.waiting
}

// State is Len and whether the consumer waits in Pop (or PopBatch) for the next item, read
// together.
func (q *Queue[T]) State() (size int, waiting bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.size, q.waiting
}

// Len is the number of waiting items.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.size
}
