// Package sharding spreads keys over the replicas of a runner started with --sharded. Each
// replica holds a coordination.k8s.io/v1 Lease of its own (LeaseName, labelled RingLabel); the
// ring is the set of Leases renewed within their duration, and a key belongs to one member by
// rendezvous hashing (Ring.Owner), so a membership change moves only the keys of the members
// that came or went.
//
// A key never has two handlers at once. The hand-over protocol is described in tick.go: a
// member narrows what it handles as soon as it sees a new ring, waits for the calls in flight
// on the keys it lost, and records the ring it drained to in its Lease (DrainedAnnotation); a
// member starts the keys it gains only once every other member of the new ring has recorded
// the same ring. With Config.AwaitListed (partitioned caches) a member narrows only once every
// other member of the new ring has recorded its caches listed for it (ListedAnnotation,
// SetListed), so that a key's new owner watches it before its old owner lets it go. A member
// that misses the renew deadline handles nothing (Handles, Begin and
// Valid answer false) before any other member can count its Lease as expired: expiry is
// counted from when the others saw its last renewal. It keeps trying, and once it renews it
// joins the ring again as a new member, gaining every key it owns (the calls it refused while
// fenced are delivered by that replay). Each renewal is conditional on the resource version
// the tick's List returned for the member's own Lease, so a renewal whose reply was lost, or
// an annotation someone added, does not make the next ones conflict.
//
// Goroutines: Member.Run is the member's only goroutine; its owner starts it and cancels its
// context once nothing of the replica can still handle a key, then Run deletes the Lease.
// Handles, Accept, Begin, Valid, Owner, Status, TakeGains, SetListed, Target, Active and
// Leave are safe from any goroutine.
// The engine learns of gained keys through Gains and TakeGains and replays them; keys it
// loses simply stop being handled. Accept is Handles for the reconcile keys events name: a key refused is
// remembered (named.go), and the Gain that gives it to the member lists it in Named, since no
// cached object may map to it any more (an object deleted while its key moved).
//
// Config.Placer places keys otherwise than rendezvous hashing, by a plan that Config.Planner
// makes once per ring (View, plan.go): the ring's lowest member makes it and writes it to its
// Lease, and every member moves to a ring only with that ring's plan, so all place every key
// alike. Partitioned caches (package shardrange) plan an even share of the namespaces per
// member and place a key "ns/name" with its namespace, on the member caching its object.
// Drains, gains and named keys work on the keys themselves; only the owner is the plan's.
//
// Leave (leave.go) hands a stopping member's keys over before it releases its Lease: marked
// leaving, it is left out of every member's ring, keeps handling its keys until the others
// have listed them (Config.AwaitListed) and then drains, and the others gain only once it has.
//
// Everything that reaches the API server goes through LeaseStore (APILeases in a cluster), and
// time through Clock, so the protocol is unit-tested with fakes.
package sharding
