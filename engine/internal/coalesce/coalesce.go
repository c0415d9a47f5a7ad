package coalesce

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jsinformer/jsinformer/engine/internal/queue"
)

// Items is what the policy needs of a queue's items of type T, about objects named by K.
type Items[T any, K comparable] interface {
	// Object is the object item is about; false for an item about none (a marker).
	Object(item T) (K, bool)
	// Update reports whether item is an update: the only items folded, or folded into.
	Update(item T) bool
	// Fold folds the update item into the queued update into: into keeps its old state and
	// takes item's new state.
	Fold(into *T, item T)
}

// Coalescer is one queue's overload state. Its fields are guarded by the queue's mutex.
type Coalescer[T any, K comparable] struct {
	limit     int
	items     Items[T, K]
	logger    *slog.Logger
	coalesced prometheus.Counter
	active    bool     // in an episode: last is filled
	last      map[K]*T // the slot of each object's last queued item, in an episode
	merged    int      // updates coalesced in this episode
}

// New is the policy for one queue, coalescing past limit queued items; logger gets the
// episodes' WARN and INFO lines, coalesced counts the updates folded.
func New[T any, K comparable](limit int, items Items[T, K], logger *slog.Logger, coalesced prometheus.Counter) *Coalescer[T, K] {
	return &Coalescer[T, K]{limit: limit, items: items, logger: logger, coalesced: coalesced}
}

var _ queue.Overflow[int] = (*Coalescer[int, int])(nil)

// Offer is called with q's mutex held before item is put: it reports whether item was folded
// into a queued item instead. An update arriving with the backlog at the limit starts an
// episode.
func (c *Coalescer[T, K]) Offer(q queue.Locked[T], item T) bool {
	if !c.active && q.Len() < c.limit {
		return false // the common case: asks nothing of the item
	}
	if !c.items.Update(item) {
		return false
	}
	if !c.active {
		c.start(q)
	}
	ref, ok := c.items.Object(item)
	if !ok {
		return false
	}
	last := c.last[ref]
	if last == nil || !c.items.Update(*last) {
		return false
	}
	if c.merged == 0 {
		c.logger.Warn("script backlog over its limit: coalescing updates of the same object until it catches up",
			"backlog", q.Len(), "max_backlog", c.limit)
	}
	c.items.Fold(last, item)
	c.merged++
	c.coalesced.Inc()
	return true
}

// Put notes slot as its object's last queued item; with q's mutex held, after the put.
func (c *Coalescer[T, K]) Put(slot *T) {
	if !c.active {
		return
	}
	if ref, ok := c.items.Object(*slot); ok {
		c.last[ref] = slot
	}
}

// Take forgets slot, which the consumer is taking, and ends the episode once the backlog is
// back under half the limit; with q's mutex held.
func (c *Coalescer[T, K]) Take(q queue.Locked[T], slot *T) {
	if !c.active {
		return
	}
	if ref, ok := c.items.Object(*slot); ok && c.last[ref] == slot {
		delete(c.last, ref)
	}
	if q.Len() <= c.limit/2 { // Len counts slot out already
		if c.merged > 0 {
			c.logger.Info("script backlog back under its limit", "backlog", q.Len(), "coalesced", c.merged)
		}
		c.active, c.last, c.merged = false, nil, 0
	}
}

// start begins an episode: it indexes the items already queued, oldest first, so each
// object's entry ends on its last one.
func (c *Coalescer[T, K]) start(q queue.Locked[T]) {
	c.active, c.last = true, make(map[K]*T, c.limit)
	q.Slots(func(slot *T) bool {
		c.Put(slot)
		return true
	})
}
