// Package k8sclient is the `k8s` global of scripts (scripting.Client): reads and writes
// through the dynamic client, resources named as on the command line (resolved by a
// Resolver), every write dry-run when configured, the Event recorder behind k8s.event, and
// the redaction that keeps Secret data out of errors and dry-run records. A single call's
// writes can be forced to dry-run (a replay with --dry-run): its context is marked
// (WithForcedDryRun) and the transport the engine wraps around every client
// (ForcedDryRunTransport) adds dryRun=All.
//
// It owns the recorder's memory of the Events it created (events.go), shared by every copy
// WithLogger makes; nothing else. A Client is safe for concurrent use: scripts' workers,
// index stages and reconcile workers call it at once. It never mutates the objects it is
// given: a write sends a copy's encoding, and results are new maps.
package k8sclient
