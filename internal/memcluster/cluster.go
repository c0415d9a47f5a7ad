package memcluster

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/clock"
)

// Options configure a Cluster.
type Options struct {
	// Clock stamps creationTimestamp and deletionTimestamp; default the real clock. The
	// offline harness passes its virtual clock.
	Clock clock.PassiveClock
	// History is how many watch events are kept for watches that resume from a
	// resourceVersion; older ones answer "410 Gone". Default 100000.
	History int
}

// Cluster is an in-memory Kubernetes API server: storage, write semantics, watches and
// discovery. Safe for concurrent use; every operation is serialized on one mutex, so the
// cluster has a single, total order of writes, like etcd.
type Cluster struct {
	opts      Options
	reg       *registry
	discovery *discoveryClient
	fields    *fieldManagers
	writes    atomic.Uint64 // successful writes that changed something; see Writes

	// wmu orders writes: a write holds it from start to end, and mu only while it reads or
	// changes the store, so the admission hook can read the cluster while the write waits.
	wmu       sync.Mutex
	admission Admission // guarded by wmu and mu; read under either

	mu       sync.Mutex
	rv       int64
	objects  map[schema.GroupVersionResource]map[string]*unstructured.Unstructured // by "ns/name"
	history  *history
	watchers map[*watcher]struct{}
	barriers int64
}

// event is one change, as watches report it; prev is the state before (nil for an add).
type event struct {
	rv   int64
	gvr  schema.GroupVersionResource
	typ  watch.EventType
	obj  *unstructured.Unstructured
	prev *unstructured.Unstructured
}

// New returns a cluster serving the built-in resources of kube-apiserver v1.37, with the
// namespaces a fresh control plane has: default, kube-system, kube-public, kube-node-lease.
func New(opts Options) (*Cluster, error) {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.History <= 0 {
		opts.History = 100000
	}
	reg, err := newRegistry()
	if err != nil {
		return nil, err
	}
	c := &Cluster{opts: opts, history: &history{max: opts.History}, reg: reg, discovery: newDiscovery(reg), fields: newFieldManagers(),
		objects: map[schema.GroupVersionResource]map[string]*unstructured.Unstructured{}, watchers: map[*watcher]struct{}{}}
	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		if _, err := c.Create(NamespacesGVR, "", obj, WriteOptions{FieldManager: "kube-apiserver"}); err != nil {
			return nil, fmt.Errorf("create namespace %s: %w", ns, err)
		}
	}
	return c, nil
}

// NamespacesGVR is the core Namespace resource.
var NamespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// Discovery serves the cluster's resources, including those of CRDs created in it.
func (c *Cluster) Discovery() discovery.DiscoveryInterface { return c.discovery }

// Writes counts the writes that changed the cluster so far. It only grows; a caller that
// saw the same count twice knows nothing was written in between.
func (c *Cluster) Writes() uint64 { return c.writes.Load() }

// ResourceVersion is the cluster's current resourceVersion.
func (c *Cluster) ResourceVersion() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strconv.FormatInt(c.rv, 10)
}

func (c *Cluster) now() metav1.Time { return metav1.NewTime(c.opts.Clock.Now().Truncate(time.Second)) }

func key(namespace, name string) string { return namespace + "/" + name }

// stored returns the object at namespace/name, or nil; called with mu held. Stored objects
// are never mutated: writes replace them.
func (c *Cluster) stored(gvr schema.GroupVersionResource, namespace, name string) *unstructured.Unstructured {
	return c.objects[gvr][key(namespace, name)]
}

// commit stores next as the state of the object (nil deletes it), assigns it the next
// resourceVersion and tells the watches. prev is the stored state before; called with mu held.
func (c *Cluster) commit(res *resource, prev, next *unstructured.Unstructured) *unstructured.Unstructured {
	c.rv++
	ev := event{rv: c.rv, gvr: res.gvr, prev: prev}
	m := c.objects[res.gvr]
	if m == nil {
		m = map[string]*unstructured.Unstructured{}
		c.objects[res.gvr] = m
	}
	switch {
	case next == nil:
		gone := prev.DeepCopy()
		gone.SetResourceVersion(strconv.FormatInt(c.rv, 10))
		delete(m, key(prev.GetNamespace(), prev.GetName()))
		ev.typ, ev.obj = watch.Deleted, gone
	case prev == nil:
		next.SetResourceVersion(strconv.FormatInt(c.rv, 10))
		m[key(next.GetNamespace(), next.GetName())] = next
		ev.typ, ev.obj = watch.Added, next
	default:
		next.SetResourceVersion(strconv.FormatInt(c.rv, 10))
		m[key(next.GetNamespace(), next.GetName())] = next
		ev.typ, ev.obj = watch.Modified, next
	}
	c.record(ev)
	c.writes.Add(1)
	c.afterCommit(res, prev, next)
	return ev.obj
}

// record appends ev to the history and hands it to the watches.
func (c *Cluster) record(ev event) {
	c.history.add(ev)
	for w := range c.watchers {
		w.offer(ev)
	}
}

// afterCommit keeps what depends on a write in step: a CRD's resources are served while the
// CRD exists, and its objects go with it (as the apiserver's CRD finalizer does).
func (c *Cluster) afterCommit(res *resource, prev, next *unstructured.Unstructured) {
	if res.gvr != crdGVR {
		return
	}
	if next != nil {
		group, lists := crdResources(next)
		plural, _, _ := unstructured.NestedString(next.Object, "spec", "names", "plural")
		c.reg.setCRD(group, plural, lists)
		return
	}
	group, _, _ := unstructured.NestedString(prev.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(prev.Object, "spec", "names", "plural")
	for gvr, objs := range c.objects {
		if gvr.Group != group || gvr.Resource != plural {
			continue
		}
		gone := &resource{gvr: gvr}
		for _, k := range sortedKeys(objs) {
			c.commit(gone, objs[k], nil)
		}
	}
	c.reg.setCRD(group, plural, nil)
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

func sortedKeys(m map[string]*unstructured.Unstructured) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Resource describes a served resource, for callers that start from an object's kind.
type Resource struct {
	GVR        schema.GroupVersionResource
	Namespaced bool
	// Status: the resource has a status subresource, which alone sets status.
	Status bool
}

// ResourceFor returns the resource that serves objects of apiVersion and kind.
func (c *Cluster) ResourceFor(apiVersion, kind string) (Resource, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return Resource{}, fmt.Errorf("resource for %s %s: %w", apiVersion, kind, err)
	}
	res := c.reg.byKind(gv.WithKind(kind))
	if res == nil {
		return Resource{}, fmt.Errorf("resource for %s %s: the cluster serves no such kind (is its CRD created first?)", apiVersion, kind)
	}
	return Resource{GVR: res.gvr, Namespaced: res.namespaced, Status: res.status}, nil
}
