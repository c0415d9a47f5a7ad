package store

import (
	"context"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// Memory returns ConfigMaps kept in this process, with the API server's optimistic
// concurrency: a create of an existing name fails with AlreadyExists, an update carrying a
// stale resourceVersion with Conflict. A Store on it behaves as one on the API server, within
// one process: `runner test` gives scripts such a store. Only Get, List (by label selector),
// Create and Update are implemented; the other methods panic.
func Memory() corev1client.ConfigMapsGetter { return &memory{objects: map[string]*corev1.ConfigMap{}} }

type memory struct {
	mu      sync.Mutex
	rv      int64
	objects map[string]*corev1.ConfigMap // by namespace/name
}

func (m *memory) ConfigMaps(namespace string) corev1client.ConfigMapInterface {
	return &memoryConfigMaps{m: m, ns: namespace}
}

// memoryConfigMaps is one namespace of a memory. The embedded interface is nil: the methods
// a Store does not call panic.
type memoryConfigMaps struct {
	corev1client.ConfigMapInterface
	m  *memory
	ns string
}

var configMapsResource = schema.GroupResource{Resource: "configmaps"}

func (c *memoryConfigMaps) Get(_ context.Context, name string, _ metav1.GetOptions) (*corev1.ConfigMap, error) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	cm := c.m.objects[c.ns+"/"+name]
	if cm == nil {
		return nil, apierrors.NewNotFound(configMapsResource, name)
	}
	return cm.DeepCopy(), nil
}

func (c *memoryConfigMaps) List(_ context.Context, opts metav1.ListOptions) (*corev1.ConfigMapList, error) {
	sel, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	out := &corev1.ConfigMapList{}
	for _, cm := range c.m.objects {
		if cm.Namespace == c.ns && sel.Matches(labels.Set(cm.Labels)) {
			out.Items = append(out.Items, *cm.DeepCopy())
		}
	}
	return out, nil
}

func (c *memoryConfigMaps) Create(_ context.Context, cm *corev1.ConfigMap, _ metav1.CreateOptions) (*corev1.ConfigMap, error) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	key := c.ns + "/" + cm.Name
	if c.m.objects[key] != nil {
		return nil, apierrors.NewAlreadyExists(configMapsResource, cm.Name)
	}
	return c.m.store(c.ns, cm), nil
}

func (c *memoryConfigMaps) Update(_ context.Context, cm *corev1.ConfigMap, _ metav1.UpdateOptions) (*corev1.ConfigMap, error) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	key := c.ns + "/" + cm.Name
	cur := c.m.objects[key]
	if cur == nil {
		return nil, apierrors.NewNotFound(configMapsResource, cm.Name)
	}
	if cm.ResourceVersion != cur.ResourceVersion {
		return nil, apierrors.NewConflict(configMapsResource, cm.Name,
			errStale(cm.ResourceVersion, cur.ResourceVersion))
	}
	return c.m.store(c.ns, cm), nil
}

// store keeps a copy of cm in namespace with the next resourceVersion; m.mu is held.
func (m *memory) store(namespace string, cm *corev1.ConfigMap) *corev1.ConfigMap {
	m.rv++
	kept := cm.DeepCopy()
	kept.Namespace, kept.ResourceVersion = namespace, strconv.FormatInt(m.rv, 10)
	m.objects[namespace+"/"+cm.Name] = kept
	return kept.DeepCopy()
}

type staleError struct{ sent, current string }

func (e staleError) Error() string {
	return "the object has been modified (resourceVersion " + e.sent + ", now " + e.current + ")"
}

func errStale(sent, current string) error { return staleError{sent, current} }
