package audit

import "sync"

// keyQueue is the Auditor's queue of object keys: first in, first out, each key held at most
// once however often it is added (so it is bounded by the number of objects watched, and a
// busy object is evaluated once, on its latest state), and a key added while it is being
// audited is queued again when that audit is done, as client-go's workqueue does. Unlike the
// workqueue it tells when nothing is queued nor being audited (idle), which a driver of the
// engine (`runner test`) waits for. Safe for concurrent use.
type keyQueue struct {
	mu         sync.Mutex
	cond       *sync.Cond
	keys       []string
	dirty      map[string]bool // queued, or added again while processing
	processing map[string]bool
	shutDown   bool
}

func newKeyQueue() *keyQueue {
	q := &keyQueue{dirty: map[string]bool{}, processing: map[string]bool{}}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// add queues key unless it is queued already; a key being audited is queued again by done.
func (q *keyQueue) add(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shutDown || q.dirty[key] {
		return
	}
	q.dirty[key] = true
	if q.processing[key] {
		return
	}
	q.keys = append(q.keys, key)
	q.cond.Signal()
}

// get waits for the next key and marks it processing; false once the queue is shut down.
func (q *keyQueue) get() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.keys) == 0 && !q.shutDown {
		q.cond.Wait()
	}
	if q.shutDown {
		return "", false
	}
	key := q.keys[0]
	q.keys[0] = ""
	q.keys = q.keys[1:]
	delete(q.dirty, key)
	q.processing[key] = true
	return key, true
}

// done ends key's processing; queued again if it was added meanwhile.
func (q *keyQueue) done(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.processing, key)
	if q.dirty[key] && !q.shutDown {
		q.keys = append(q.keys, key)
		q.cond.Signal()
	}
}

// idle reports that no key is queued or being processed.
func (q *keyQueue) idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.keys) == 0 && len(q.processing) == 0
}

// shutdown wakes get, which returns false from then on; later adds are dropped.
func (q *keyQueue) shutdown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shutDown = true
	q.keys, q.dirty = nil, map[string]bool{}
	q.cond.Broadcast()
}
