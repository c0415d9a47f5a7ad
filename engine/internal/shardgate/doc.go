// Package shardgate is a sharded runner's standing in its ring, as package engine asks it
// before each call: whether this replica may call a handler, reconcile or schedule run on a
// key (Begin, counting the calls in flight so that a key moves only once they ended), whether
// it queues a reconcile key (Handles; Accept also remembers a key refused, so that the gain
// that gives it the key names it), which keys it gained since it last asked (TakeGains),
// who owns a key another replica handles (Owner, OtherOwner), and its status for the state
// API and metrics. It builds the replica's member of package sharding on the cluster (New)
// and owns that member's goroutine (Start). A nil *Gate is an unsharded runner: every key is
// its own, it gains nothing, has no status, and Start starts nothing.
//
// It plugs into package engine, which combines Begin with leadership (a standby or a runner
// whose Lease lapsed calls nothing), fences its writes on Valid, and replays gained keys on
// its versions' workers. It knows nothing of versions, queues or the loader.
//
// Goroutines: Start starts the member's Run on a goroutine of its own; the stop func it
// returns cancels it and waits for it (the engine calls stop after every version has
// stopped, so the member's Lease is deleted only once nothing of this replica can still
// handle a key). A member that cannot renew does not give up: it handles nothing (Begin,
// Handles and Valid answer false) until it has joined the ring again.
// Begin, Handles, Accept, Valid, Owner, OtherOwner, TakeGains, Status and Members are safe from any
// goroutine (the ring member's own locks); TakeGains hands each gain out once, so one
// goroutine (the engine's loader) takes them.
package shardgate
