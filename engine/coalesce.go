package engine

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
)

// The overload policy. A version's queues are unbounded, so that client-go's listeners never
// block and no event is lost; a handler slower than its resource changes would then grow the
// process without bound. Past Config.MaxBacklog queued events, a queue coalesces: an update of
// an object whose last queued event is an update too is folded into that event, which keeps
// its old state (the last one the handler was given, or will be) and takes the newest state
// and index values. Adds, deletes and markers are never folded, so the handler still sees
// every object appear and go, and its last call for an object sees its final state. The
// backlog is then bounded by the limit plus one event per object changing. Events of one
// object keep their order; events of different objects may be handled in another order than
// they came, which the contract does not promise anyway.
//
// An episode starts when an update arrives at a queue holding the limit, and ends when the
// queue is back under half of it. The first update coalesced in an episode is logged (a WARN
// naming the script), the end too (an INFO with how many were), and each one is counted in
// jsinformer_events_coalesced_total. Outside episodes a queue does nothing more than count
// its items, so a reload replaying a large cache costs nothing extra.

// DefaultMaxBacklog is Config.MaxBacklog when zero: about a minute of a busy resource's
// changes for a handler that keeps up on average, and a few MB of events.
const DefaultMaxBacklog = 10000

// objectRef is what coalescing matches events on: one object of one watched resource.
type objectRef struct {
	sub *subscription
	key string
}

// coalescer is one queue's overload state. Its fields are guarded by the queue's mutex.
type coalescer struct {
	limit     int
	logger    *slog.Logger
	coalesced prometheus.Counter
	active    bool                 // in an episode: last is filled
	last      map[objectRef]*event // the slot of each object's last queued event, in an episode
	merged    int                  // updates coalesced in this episode
}

func newCoalescer(limit int, logger *slog.Logger, coalesced prometheus.Counter) *coalescer {
	return &coalescer{limit: limit, logger: logger, coalesced: coalesced}
}

// offer is called with q's mutex held before ev is put: it reports whether ev was folded into
// a queued event instead. An update arriving with the backlog at the limit starts an episode.
func (c *coalescer) offer(q *queue[event], ev event) bool {
	if ev.kind != eventUpdate {
		return false
	}
	if !c.active {
		if q.size < c.limit {
			return false
		}
		c.start(q)
	}
	last := c.last[objectRef{sub: ev.sub, key: ev.key}]
	if last == nil || last.kind != eventUpdate {
		return false
	}
	if c.merged == 0 {
		c.logger.Warn("script backlog over its limit: coalescing updates of the same object until it catches up",
			"backlog", q.size, "max_backlog", c.limit)
	}
	last.obj, last.values = ev.obj, ev.values // old stays: the state the handler will have seen
	c.merged++
	c.coalesced.Inc()
	return true
}

// put notes slot as its object's last queued event; with q's mutex held, after the put.
func (c *coalescer) put(slot *event) {
	if !c.active {
		return
	}
	if ref, ok := refOf(*slot); ok {
		c.last[ref] = slot
	}
}

// take forgets slot, which the consumer is taking, and ends the episode once the backlog is
// back under half the limit; with q's mutex held.
func (c *coalescer) take(q *queue[event], slot *event) {
	if !c.active {
		return
	}
	if ref, ok := refOf(*slot); ok && c.last[ref] == slot {
		delete(c.last, ref)
	}
	if q.size <= c.limit/2 { // size counts slot out already
		if c.merged > 0 {
			c.logger.Info("script backlog back under its limit", "backlog", q.size, "coalesced", c.merged)
		}
		c.active, c.last, c.merged = false, nil, 0
	}
}

// start begins an episode: it indexes the events already queued, oldest first, so each
// object's entry ends on its last one.
func (c *coalescer) start(q *queue[event]) {
	c.active, c.last = true, make(map[objectRef]*event, c.limit)
	for ch := q.head; ch != nil; ch = ch.link {
		for i := ch.next; i < ch.n; i++ { // a chunk is linked only once full, so this is in order
			c.put(&ch.items[i])
		}
	}
}

var _ overflow[event] = (*coalescer)(nil)

// refOf is the object an event is about; markers (sync, schedule) are about none.
func refOf(ev event) (objectRef, bool) {
	if ev.sub == nil {
		return objectRef{}, false
	}
	return objectRef{sub: ev.sub, key: ev.key}, true
}
