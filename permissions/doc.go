// Package permissions computes what a scripts folder needs of the API server, so that the
// runner can be granted exactly that: `runner rbac` prints it as RBAC objects, deploy/rbac.yaml
// is generated from it, and the runner checks at start and on each reload that it holds it.
//
// One computation serves them all. Script takes one loaded plugin: list and watch on each of
// its watches (in the watch's namespace, or the runner's -n), the verbs of each k8s call found
// in its source whose resource is known when it loads (scripting.Program.Calls: literals,
// consts, helpers' parameters; finalizer helpers get and patch, status helpers act on
// "/status", a server-side apply patch and create, k8s.event create and patch on Events; a
// dry-run write needs what the write needs), and its declared `permissions`. A call whose
// resource is known at run time only is a Dynamic, reported with its place, unless the script
// declares `permissions` (which then must cover it). Compute does this for every plugin of a
// folder, found as the runner finds them, and adds the runner's own needs (Runner: the Leases
// of --leader-elect and --sharded, the reviews of a non-loopback debug API).
// A script with validate or mutate also needs what serving admission takes, as the runner's
// flags say (Admission.Needs): its entry in the runner's own pair of webhook configurations
// when it registers them, and the certificate Secret when it keeps one, each by name (create
// cannot be limited by name: it is a rule of its own). A call that names its object by a
// constant needs its verbs on that object only. A script whose only handlers are validate
// and mutate and that never reads ctx.cache (scripting.NeedsInformers) needs no list or watch.
//
// Roles merges needs into rules per scope (cluster-wide, the runner's namespace, other
// namespaces), sorted, each with the scripts that need it; WriteYAML and WriteJSON print them
// with the ServiceAccount and bindings, one Role and RoleBinding per namespace (the runner's
// own merged with the one of its namespace when that is known); ReadGrants reads an RBAC file
// as applying it leaves it (a later object replaces one of the same kind, namespace and name)
// and Grants compares it with needs.
//
// Checker is the runner's check of itself: Set and Remove (the engine's loader) say what each
// loaded script needs; Run, on a goroutine its caller owns and joins, reviews it with
// SelfSubjectAccessReviews (NewReviewer) at once, on each change and every Interval, answers
// cached for Interval and at most MaxReviews a round, and logs what went missing (WARN, with
// the rule to add) and what was granted since (INFO); Refused records a call the API server
// forbade (IsRefusal: a 403 other than a write into a namespace being deleted). Missing, Checked and Forbidden may be read from any goroutine. Observe wraps a script's
// client to report each call's permission and error (the refused calls; `runner test
// --permissions`).
//
// Everything else is a pure function of its inputs but Compute, which reads the folder and
// runs each script's top-level code (on the script's own goroutine, joined before it
// returns) without a client: a script's k8s calls are never made.
package permissions
