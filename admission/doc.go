// Package admission answers Kubernetes admission requests from scripts' validate and mutate
// functions (package scripting): what a script's answer, error or timeout means to the API
// server, and the JSON Patch of a mutation.
//
// Validate and Mutate (decide.go) call one Script, the admission functions of a loaded
// script version as the engine serves them, and return a Decision: allowed or denied, with
// the message, HTTP code, warnings and patch the API server passes on to its client, and the
// outcome metrics and views name (allowed, denied, warned, audited, errored). The script's
// AdmissionSpec decides the rest: mode "warn" turns a denial into a warning and "audit" only
// records it (a mutation in those modes is not applied, but reported as a warning or
// recorded); a script that throws, times out, is stopped by the memory guard or returns what
// it may not answers by its failurePolicy, "Fail" denying with the error and its file:line
// (code 500), "Ignore" allowing with a warning.
//
// The patch (patch.go) is the diff of the request's object and the object mutate returned,
// as JSON documents, by gomodules.xyz/jsonpatch/v2 (as controller-runtime computes it); one
// that touches apiVersion, kind, metadata.name, metadata.namespace or metadata.uid is refused
// (ErrProtectedField) and answered by the failure policy.
//
// Goroutines: Validate and Mutate run on the caller's goroutine and may be called
// concurrently; a Decision is a value the caller owns. Nothing here keeps state.
package admission
