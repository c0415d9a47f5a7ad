package scripting

import (
	"cmp"
	"context"
	"k8s.io/apimachinery/pkg/types"
	"time"
)

// Object is an unstructured Kubernetes object as client-go's unstructured package holds it:
// nested map[string]any, []any, string, int64, float64, bool and nil. The scripting package
// never mutates an Object it is given; scripts see it through read-only views.
type Object = map[string]any

// WatchSpec is one entry of a definition's `watch` field. Resource is spelled as on the command
// line (`apps/v1/deployments`, `deploy`, `widgets.example.com`); resolving it is not this
// package's business.
type WatchSpec struct {
	Resource      string
	Namespace     string
	LabelSelector string
	FieldSelector string
	// Enqueue is what the entry's events enqueue for reconcile (EnqueueSelf when not given).
	Enqueue EnqueueMode
}

// Definition is what a script's exported object declares, read once at instantiation.
type Definition struct {
	// Watch is nil when the script does not say; the engine then uses the command line's --gvr.
	Watch       []WatchSpec
	Indexers    []string // names of the index functions, sorted
	OnAdd       bool
	OnUpdate    bool
	OnDelete    bool
	Reconcile   bool
	Concurrency int // reconcile workers; 1 when not given
	MaxRetries  int // reconcile retries before the key is dropped; 5 when not given
	// Schedules are the `schedule` entries, in order; RunSchedule(i) calls the i-th.
	Schedules []ScheduleSpec
	// Metrics are the `metrics` families, sorted by name.
	Metrics []MetricSpec
	// Permissions are the `permissions` entries, in order: what the script's k8s calls need
	// beyond what its source shows (Program.Calls).
	Permissions []PermissionSpec
	// Validate and Mutate report validate(obj, ctx) and mutate(obj, ctx); Admission is the
	// `admission` options with defaults filled in, the zero value without either (admission.go).
	Validate  bool
	Mutate    bool
	Admission AdmissionSpec
	// Net is the `net` declaration, the --allow-net entries the script may reach (within the
	// runner's list); nil when the script declares none and may reach the whole list.
	Net []string
	// Store is the `store` declaration: shared namespaces and readable keys (storedef.go).
	Store StoreSpec
	// Outbox is the `outbox` declaration (outbox.go); nil without one.
	Outbox *OutboxSpec
	// Shard is the `shard` declaration (ShardNamespace, ShardUID, ShardNone), "" when the
	// script does not say: how the runner partitions its caches under --shard-cache.
	Shard string
}

// Event is the Go side of the `ctx` argument a handler receives.
type Event struct {
	Resource          string // the resource the event is about, canonical: "apps/v1/deployments"
	IsInInitialList   bool
	FinalStateUnknown bool
	Cache             Cache        // may be nil: ctx.cache then throws when used
	Enqueue           func(string) // may be nil: ctx.enqueue then throws when used
	Metrics           Metrics      // may be nil: ctx.metrics.NAME.inc and the like then throw
	Delivery          *Delivery    // ctx.delivery: set by Deliver, nil (undefined) elsewhere
}

// Cache answers `ctx.cache` calls from the states the calling script version has been shown.
// Implementations must be safe to call from the script's goroutine while events are applied.
type Cache interface {
	// Get returns the object, or nil when it is not cached. resource "" means the event's.
	Get(resource, namespace, name string) (Object, error)
	// List returns the cached objects of resource ("" means the event's) in namespace
	// ("" means all) that match labelSelector ("" means all).
	List(resource, namespace, labelSelector string) ([]Object, error)
	// ByIndex returns the objects whose index function returned value.
	ByIndex(index, value string) ([]Object, error)
	// IndexKeys returns the "namespace/name" keys (or "name" when cluster-scoped) of ByIndex.
	IndexKeys(index, value string) ([]string, error)
}

// ListOptions are the options of k8s.list.
type ListOptions struct {
	Namespace     string
	LabelSelector string
	FieldSelector string
}

// PatchOptions are the options of k8s.patch and k8s.patchStatus. Type is one of "merge"
// (default), "json", "strategic", "apply". An empty FieldManager means
// the Client's default (the runner's is "jsinformer").
type PatchOptions struct {
	Type         string
	Force        bool
	FieldManager string
}

// patchTypes maps the patch type names scripts use to the API's: the one list both the
// k8s.patch argument check and the client sending the patch go by.
var patchTypes = map[string]types.PatchType{
	"merge": types.MergePatchType, "json": types.JSONPatchType,
	"strategic": types.StrategicMergePatchType, "apply": types.ApplyPatchType,
}

// PatchType is the API patch type o.Type names ("" is "merge"); false for an unknown name.
func (o PatchOptions) PatchType() (types.PatchType, bool) {
	pt, ok := patchTypes[cmp.Or(o.Type, "merge")]
	return pt, ok
}

// DeleteOptions are the options of k8s.delete. PropagationPolicy is "", "Orphan",
// "Background" or "Foreground".
type DeleteOptions struct {
	PropagationPolicy string
}

// Client is the Go side of the `k8s` global: synchronous server reads and writes. Errors that
// carry a Kubernetes status (k8s.io/apimachinery/pkg/api/errors.APIStatus) surface in JS with
// `code` and `reason`. ctx is cancelled when the calling handler's time is up.
type Client interface {
	Get(ctx context.Context, resource, namespace, name string) (Object, error)
	List(ctx context.Context, resource string, opts ListOptions) ([]Object, error)
	Create(ctx context.Context, resource string, obj Object) (Object, error)
	Update(ctx context.Context, resource string, obj Object) (Object, error)
	UpdateStatus(ctx context.Context, resource string, obj Object) (Object, error)
	Patch(ctx context.Context, resource, namespace, name string, patch []byte, opts PatchOptions) (Object, error)
	PatchStatus(ctx context.Context, resource, namespace, name string, patch []byte, opts PatchOptions) (Object, error)
	Delete(ctx context.Context, resource, namespace, name string, opts DeleteOptions) error
	Event(ctx context.Context, obj Object, eventType, reason, message string) error
}

// ReconcileResult is what a reconcile handler returned.
type ReconcileResult struct {
	RequeueAfter time.Duration // zero: done
}
