// Command runner watches Kubernetes resources and runs the JavaScript plugins of a folder as
// their event handlers, reloading them when the files change. See `runner --help`.
//
// It is deliberately thin: flags in kubectl's conventions (the kubeconfig flags come from
// cli-runtime), an slog logger (client-go's klog output is routed into it), signal handling,
// the optional /metrics, /healthz and /readyz server, and engine.Run. Every decision about
// scripts and informers lives in package engine.
//
// The debug API (debugserve.go, package debugapi) is served on --debug-addr, loopback by
// default; the subcommands status, queue, cache, indexes, explain, tail, retry, pause, resume,
// log-level and replay (debugviews.go, debugactions.go) are its clients and print with
// internal/debugtext. See docs/debugging.md.
//
// Admission webhooks (webhook.go, package admission; docs/admission.md): with --webhook-url,
// --webhook-service or --webhook-cert-dir, the admission server, the certificate's renewal or
// reload and the registrar each run on a goroutine that webhooks.stop joins. The registrar
// starts once the engine has loaded its initial scripts (engine.Config.OnReady). At shutdown
// the engine's context (webhooks.engineContext) ends only after the admission server has
// stopped, on the goroutine context.AfterFunc starts, which ends with that stop. Every
// decision is counted and kept in the engine's trace; runner status lists each script's
// webhook entries, naming the scripts an entry is shared with (webhookstatus.go).
//
// `runner types` (types.go) writes TypeScript declarations: scripting.Declarations, and with
// --gvr the interfaces internal/typegen generates from the cluster's OpenAPI v3, the names
// resolved by dynamicinformer's resolver as --gvr is for the runner. It runs on the command's
// goroutine and starts none.
//
// `runner check` (checkcmd.go) reads manifests and runs them through a folder's admission
// scripts with package check, on the command's goroutine; check.Run closes the offline
// engine it starts before it returns.
//
// `runner rbac` (rbaccmd.go) prints the RBAC a scripts folder needs, or checks a file against
// it, with package permissions; `runner test --permissions` (testperms.go) adds what the
// tests' calls used. Both run on the command's goroutine (permissions.Compute joins the
// folder scan it starts).
package main
