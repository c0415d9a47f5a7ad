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
// as JSON documents, by gomodules.xyz/jsonpatch/v2 (as controller-runtime computes it), after
// every value of the returned object JavaScript cannot tell from the request's is the
// request's own (untouched.go: integers above 2^53, "__proto__" keys), so that the patch
// holds only what the script changed; one
// that touches apiVersion, kind, metadata.name, metadata.namespace or metadata.uid is refused
// (ErrProtectedField) and answered by the failure policy.
//
// # Server
//
// Server (server.go) is the HTTPS AdmissionReview v1 endpoint: one path per webhook entry,
// ValidatePrefix or MutatePrefix followed by the script's encoded name
// ("/validate/team-a/policy.js") for a script with an entry of its own, or GroupPath's
// ValidateGroupPrefix or MutateGroupPrefix path naming the scripts that share an entry
// ("/validate-group/fail/1/a.js/2/team-a/policy.js": the entry's failure policy, then each encoded
// name preceded by the count of its segments). A name is encoded (pathname.go, EncodeName) into segments a Service's path
// accepts: each part that is a lowercase DNS-1123 subdomain as it is, any other in base32hex
// after "b32--" ("Policy.js" is "b32--a1nmoqb3f4n6kso"); the routing decodes it (DecodeName),
// refusing any spelling EncodeName does not write. Each
// request asks Lookup for the scripts' admission functions, so a script is answered for only
// once a version of it is loaded (a script of a shared path not loaded now answers by the path's failure policy, resolve.go;
// 404 when none is loaded), and a reload swaps them between two requests (the engine lets a call in flight on the
// old version finish).
//
// A request to several scripts is fanned out in process (fanout.go): MutateAll asks the
// mutates one after another in the path's order, each seeing the object as the previous one
// left it, and answers with the patch from the request's object to the last one (a script's
// failure answers by its own failure policy: Ignore drops its change, Fail denies there and
// the rest are not asked); ValidateAll runs the validates concurrently and merges them
// (denied if any denies after its mode, the message naming each denying script, the code of
// the first denial and the warnings of all in path order). Observe still sees each script's
// own decision, in path order. A bad request gets a 4xx with a
// plain-text reason and never reaches a script (review.go): unknown path or script, or a kind
// the script does not define (404), not POST (405), not application/json (415), not an
// AdmissionReview, another version than admission.k8s.io/v1, no request, an undecodable
// object, values outside the AdmissionReview schema or a resource no script of the path is
// registered for (400, reviewcheck.go: no metric series, no decision record), a path over
// MaxPathBytes (414), a body over MaxBodyBytes, DefaultMaxBodyBytes (7 MiB) by default (413).
// Limits (limits.go) bound the connections, their timeouts and the bodies held in memory,
// read as they arrive (body.go). The
// scripts' time is their webhook's: the API server's ?timeout= when sent, else their
// timeoutSeconds, counted from the request's arrival less AnswerMargin; that one Deadline
// covers the whole fan-out: a call ends by it (AdmissionRequest.Deadline), and a script whose
// turn comes after it is not started and answers by its failure policy.
//
// # Registration, certificates, metrics
//
// Registrar (register.go) keeps one ValidatingWebhookConfiguration and one
// MutatingWebhookConfiguration with an entry per Group (group.go): the scripts whose entries
// would be identical but for their name and path share one, in a stable order (groups by
// their first script, scripts by name), unless a name cannot be put in a GroupPath (one with
// an empty part); a script alone keeps its own path and WebhookName. Each entry is checked as
// the API server validates one before it is written (hookcheck.go), and one that fails, or
// that the API server's 422 names (registerretry.go), is left out and logged alone: one bad
// entry never keeps the others from being updated. The namespaceSelector never matches
// AlwaysExcluded (kube-system, kube-node-lease), Registrar.Exclude nor the script's
// admission.excludeNamespaces, and ANDs the script's admission.namespaceSelector; a rule lists the
// script's admission.subresources beside its resource ("deployments/scale"). The configurations are reconciled from Entries on Changed,
// every Resync and a second after a failure; they stay when it stops. Replicas registering
// different URLs converge (registershare.go): an entry keeps the URL another replica wrote
// while a server answers there, checked every AnswerCheck, and is taken over once none does. SecretCerts
// (certsecret.go, certgen.go) keeps a CA and serving certificate in a Secret the replicas
// share and renews the serving certificate with the same CA; FileCerts (certfiles.go) serves
// a folder's files and reloads them when they change. Both hold a certificate of a new CA
// (certgate.go) until the Registrar reports a caBundle carrying it registered; the Registrar
// writes the union of the CAs stored and those its replica wants, dropping a replaced CA
// after CAGrace (cabundle.go), so replicas moving to a new CA are never refused and never
// flip the bundle. Metrics (metrics.go) counts decisions
// through Config.Observe.
//
// Observation.TraceRecord (trace.go) is a decision as the views show it: a trace record with
// Event "admission", kept by the engine beside the object's events (Engine.RecordAdmission).
//
// Goroutines: Validate, Mutate, MutateAll and ServeHTTP run on the caller's goroutine and may
// be called concurrently; ValidateAll runs the first script on the caller's goroutine and
// each other one on a goroutine of its own, which it joins before returning (a panic there
// answers by the script's failure policy); the scripts see the request's object read-only. A
// Decision is a value the caller owns; Config.Observe is called on the request's goroutine. Serve runs net/http's server over TLS on the caller's listener: it
// starts one goroutine (http.Server.ServeTLS, with net/http's per-connection ones) and joins
// it before returning, once its context has ended, Config.ShutdownDelay has passed with the
// listener still open, and the requests in flight have finished within the grace given; over
// HTTP/1.1 it first drains the API server's kept-alive
// connections (drain.go), so that a stopping replica fails no request. Registrar.Run, SecretCerts.Run and FileCerts.Run are each one loop
// on the caller's goroutine until its context ends; their other methods are safe from any
// goroutine (Registrar's Changed, the certificates' GetCertificate, CABundle and Registered).
package admission
