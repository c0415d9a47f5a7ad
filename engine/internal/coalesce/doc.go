// Package coalesce is the overload policy of the engine's event queues (package
// engine/internal/queue). A version's queues are unbounded, so that client-go's listeners
// never block and no event is lost; a handler slower than its resource changes would then
// grow the process without bound. Past a limit (the engine's Config.MaxBacklog) of queued
// events, a queue coalesces: an update of an object whose last queued event is an update too
// is folded into that event, which keeps its old state (the last one the handler was given,
// or will be) and takes the newest state and index values. Adds, deletes and markers are never
// folded, so the handler still sees every object appear and go, and its last call for an
// object sees its final state. The backlog is then bounded by the limit plus one event per
// object changing. Events of one object keep their order; events of different objects may be
// handled in another order than they came, which the contract does not promise anyway.
//
// An episode starts when an update arrives at a queue holding the limit, and ends when the
// queue is back under half of it. The first update coalesced in an episode is logged (a WARN
// naming the script, through the logger given), the end too (an INFO with how many were),
// and each one is counted on the counter given (jsinformer_events_coalesced_total). Outside
// episodes a queue does nothing more than count its items, so a reload replaying a large
// cache costs nothing extra.
//
// The policy knows nothing of the engine's events: Items tells it which items are updates,
// which object each is about, and how to fold one update into another.
//
// Goroutines and locks: a Coalescer belongs to one queue and is called only by it, with the
// queue's lock held (queue.Overflow), on the producers' goroutines (Offer, Put) and the
// consumer's (Take); its state needs no lock of its own. It starts no goroutine.
package coalesce
