// Package scriptcache is what one script version has been shown: the last state of every
// object its events carried and the values its index functions returned for them (Store),
// and ctx.cache over it (View). The version's worker is its only writer and applies an event
// before calling the handler, so the cache never disagrees with the events handled; handlers
// and reconcile workers read it from other goroutines (a RWMutex). Objects are the informers'
// shared ones and are never mutated here.
package scriptcache
