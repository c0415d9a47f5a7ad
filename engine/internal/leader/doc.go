// Package leader is the runner's leader election: a coordination.k8s.io/v1 Lease held through
// client-go's leaderelection, with a fence (Valid) that is false as soon as the last renewal
// is older than the renew deadline, so a runner cut off from the API server stops acting
// before a standby may take the Lease, whether or not client-go has noticed yet.
//
// It plugs into package engine: the engine defaults its Config.LeaderElection (and its
// sharding Leases) with Config.WithDefaults, builds an Elector from it, fences its calls on
// Valid and its writes with Fence (an http.RoundTripper that refuses all but reads while
// Valid, or a shard member's validity, is false: ErrNotLeader), reads Changes on its loader
// goroutine (a standby reloads every script when it starts leading; losing the Lease ends
// Run, with ErrLost), checks Fenced periodically, and shows Holder in the state API. It knows nothing of scripts or versions.
//
// Goroutines: Run blocks its caller; Start runs it on a goroutine of its own that its wait
// func joins (the engine starts it and joins it after every version has stopped, so the Lease
// is released only when nothing of this runner can still write); client-go's callbacks run on that goroutine and send on Changes,
// which is buffered for one start and one stop. Valid, Leading, Fenced and Holder are safe
// from any goroutine; Fence's transport calls valid on each request's goroutine.
package leader
