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
// Idle includes the audits (admission.audit): every audit script's initial pass done and
// nothing queued for it, so that AuditReports after a Settle reflects every change.
// Idle includes parked (parked.go): a call waiting on nothing but fetch requests its client
// holds for the virtual clock (scripting.HoldRequest) cannot go on before the clock moves, so
// when every busy worker is in such a call and no work waits for a free one, the harness is
// quiet. fetch's timeouts and the clients' late answers are AfterFuncs of the virtual clock
// (afterfunc.go): Advance stops at each one's due time, as at a schedule's, and calls it on
// its own goroutine, which releases the hold before the request ends. Settle moves the clock
// for delayed keys only; the AfterFuncs it passes on the way fire at the key's time. Close interrupts the calls still running (a held request among them) rather
// than waiting for their deadlines.
//
// Admission (admission.go, admitmatch.go): the harness plays kube-apiserver's webhook
// dispatcher for the scripts its engine serves with validate or mutate. It installs a hook in
// the cluster (memcluster.Admission), so every write, the harness's and the plugins', is sent
// to the matching mutating webhook entries in the order the runner registers them, each patch
// applied, then to every matching validating entry; a denial fails the write with the error
// the API server returns (webhook errors' ToStatusErr). The entries are the runner's: scripts
// whose entries would be alike share one (admission.Groups), which admission.Server fans out
// (mutations chained in order, validations merged), so the answers are the real path's. Admit does the same for one request without writing.
// Each call is an AdmissionReview handed in process to admission.Server, the runner's own
// handler, so a decision is the webhook's. The hook runs on the writer's goroutine; it is
// removed by Close before the engine stops. Config.OnAdmission is told each write's answers
// there (the calls, the patch, the denial): `runner check` (package check) reads them.
package offline
