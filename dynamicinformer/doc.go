// Package dynamicinformer shares client-go dynamic informers between many users and resolves
// resource names the way kubectl does. It knows nothing of JavaScript.
//
// Factory hands out informers keyed by (GVR, namespace, label selector, field selector): every
// Acquire of an equal Key returns a handle on the same running informer, so one LIST+WATCH
// serves any number of users. Each handle is released once; when the last handle of a key is
// released the informer is stopped and forgotten, and a later Acquire starts a fresh one.
// client-go's own factory can neither stop one informer nor key by selector, hence this.
//
// Every informer strips metadata.managedFields before objects enter its cache (the transform
// must be set before the informer starts, which Factory guarantees). Cached objects are shared
// by all users and must be treated as immutable: equal strings inside them may even be shared
// between objects.
//
// NewClient is the dynamic client to build a Factory on: client-go's, with its JSON decoding
// (list bodies, watch frames and their objects) done by internal/unstructuredjson, which
// gives client-go's objects without ever allocating managedFields, several times faster.
// Whatever that decoder does not reproduce exactly goes to client-go's decoder, so malformed
// responses fail as they do in client-go: a watch decode error is an error event, after which
// the reflector restarts the watch from the last resourceVersion. Any dynamic.Interface works
// with the Factory; this one is what makes it fast.
//
// Factory methods are safe for concurrent use. Shutdown stops every informer and waits for
// their goroutines; handles released after Shutdown are no-ops.
//
// Resolver maps "apps/v1/deployments", "deployments.v1.apps", "deployments.apps",
// "deployments", "deploy" and custom resources to a Resource, using discovery and a cached
// RESTMapper that is reset on a miss so that CRDs created after start-up resolve.
package dynamicinformer
