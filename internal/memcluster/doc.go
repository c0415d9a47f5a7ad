// Package memcluster is an in-memory Kubernetes API server for offline tests of scripts: a
// dynamic client, watches and discovery over a store with the server's write semantics.
//
// What it reproduces, with the libraries kube-apiserver itself uses (apimachinery's field
// manager and structured-merge-diff for managedFields and server-side apply, client-go's
// compiled-in OpenAPI models for built-in kinds, evanphx/json-patch, strategicpatch,
// apimachinery's metadata validation and error constructors):
//   - create with generateName, uid, creationTimestamp, generation; AlreadyExists; a
//     namespace that does not exist (NotFound) or is terminating (Forbidden);
//   - update with resourceVersion preconditions (Conflict), unconditional updates, and no
//     write and no event for an update that changes nothing;
//   - JSON merge, JSON and strategic merge patches (415 for custom resources), server-side
//     apply with field managers, conflicts and force;
//   - the status subresource: the main resource ignores status, status writes change only it;
//   - delete, with finalizers and propagation policies: deletionTimestamp, and the object
//     goes when its last finalizer does;
//   - errors with the real server's code, reason and message;
//   - admission webhooks, through a hook (SetAdmission, admission.go) asked where
//     kube-apiserver calls its mutating and validating webhooks on create, update, patch,
//     apply and delete; the offline harness installs one that runs the scripts' mutate and
//     validate, so this package imports nothing of scripting;
//   - watches with label and field selectors, objects entering and leaving a selection as
//     ADDED and DELETED, resumable from a resourceVersion;
//   - discovery of the built-in resources of kube-apiserver v1.37 (builtin.json, checked
//     against the real server) and of the CRDs created in the cluster; /version says
//     KubernetesVersion with "-memcluster" appended.
//
// It behaves as kube-apiserver KubernetesVersion (v1.37.2), the newest of the runner's support
// window (v1.34 to v1.37): TestCrossCheckWithControlPlane runs against v1.37.2 in `make test`
// and against v1.34, v1.35 and v1.36 in `make test-compat`. Those releases answer as v1.37 but
// for the wording of a few errors (a merge patch that is not JSON), which the cross-check
// expects from them (olderreleases_test.go).
//
// What it does not: type-specific validation and defaulting of built-in kinds (a Deployment
// gets no default strategy; Secret type and Namespace label and finalizer are the
// exceptions), admission plugins beyond namespace lifecycle and the hook, version conversion (every resource is
// stored in the version it is served in), CRD schemas (custom resources are neither pruned
// nor validated; server-side apply treats their lists as atomic), and controllers: no
// garbage collection, no namespace deletion, Deployments create no ReplicaSets, exactly as
// on the control plane the project's tests run. TestCrossCheckWithControlPlane runs one
// corpus of writes against both and fails on any difference, so the two cannot drift apart.
//
// Concurrency: every method is safe for concurrent use. All operations are serialized on
// one mutex, which gives writes a single total order and resourceVersions that only grow;
// writes also hold a second one from start to end, so that the admission hook runs without
// the first (it may read the cluster) while no other write can change what it decides on.
// Objects returned are copies the caller owns. Each open watch has one goroutine, started
// by Watch and owned by the watch: Stop (or the end of the request's context) ends it and
// closes the result channel. Writers never wait for watchers: each watch buffers without
// bound.
//
// Barrier lets a test harness know when watchers have caught up: it sends every watch a
// marker object after everything already sent; consumers drop markers (IsBarrier).
package memcluster
