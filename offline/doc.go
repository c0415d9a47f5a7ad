// Package offline runs the runner's engine without a cluster, for `runner test`: an
// in-memory cluster (internal/memcluster) serves the informers and takes the scripts' writes,
// and a virtual clock, moved only by Settle and Advance, drives scripts' Date, schedules and
// reconcile delays. It is one implementation of engine.Env; the engine does not know it is
// offline.
//
// It owns: the barrier wrapper around the informers (source.go), which tells when client-go
// has delivered every change made before a point; the virtual clock's timers and reconcile
// queues (clock.go, queue.go), which tell when every due run and key has been handled; and
// the Harness, whose caller's goroutine plays the engine's loader. Settle and Advance return
// only when informers, version workers, schedules and reconcilers are all idle and the
// cluster saw no write over a whole round.
//
// Admission (admission.go, admitmatch.go): the harness plays kube-apiserver's webhook
// dispatcher for the scripts its engine serves with validate or mutate. It installs a hook in
// the cluster (memcluster.Admission), so every write, the harness's and the plugins', is sent
// to the matching scripts' mutating webhooks in order of script name, each patch applied, then
// to every matching validating webhook; a denial fails the write with the error the API server
// returns (webhook errors' ToStatusErr). Admit does the same for one request without writing.
// Each call is an AdmissionReview handed in process to admission.Server, the runner's own
// handler, so a decision is the webhook's. The hook runs on the writer's goroutine; it is
// removed by Close before the engine stops.
package offline
