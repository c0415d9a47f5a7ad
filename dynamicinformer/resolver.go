package dynamicinformer

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
)

// Resource is a resolved resource name.
type Resource struct {
	GVR        schema.GroupVersionResource
	Kind       string
	Namespaced bool
}

// String is the --gvr spelling of the resource.
func (r Resource) String() string { return FormatGVR(r.GVR) }

// ErrUnknownResource is wrapped by Resolve's error when no resource matches.
var ErrUnknownResource = errors.New("unknown resource")

// Resolver resolves resource names against the server's discovery information. Safe for
// concurrent use.
type Resolver struct {
	cached   discovery.CachedDiscoveryInterface
	mapper   meta.RESTMapper // shortcut-expanding view of deferred
	deferred meta.ResettableRESTMapper
	mu       sync.Mutex // serializes resets so concurrent misses do one re-discovery
}

// NewResolver builds a Resolver over a discovery client; results are cached until a miss.
func NewResolver(client discovery.DiscoveryInterface, logger *slog.Logger) *Resolver {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cached := memory.NewMemCacheClient(client)
	deferred := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	warn := func(msg string) { logger.Warn(msg) }
	return &Resolver{cached: cached, mapper: restmapper.NewShortcutExpander(deferred, cached, warn), deferred: deferred}
}

// Resolve maps a name as kubectl accepts it, plus the "group/version/resource" and
// "version/resource" spellings of --gvr, to a Resource. A name not found triggers one
// re-discovery (for CRDs created since the last one) before failing with ErrUnknownResource
// and the closest known names.
func (r *Resolver) Resolve(name string) (Resource, error) {
	res, err := r.resolve(name)
	if err != nil && meta.IsNoMatchError(err) {
		r.reset()
		res, err = r.resolve(name)
	}
	if err == nil {
		return res, nil
	}
	if !meta.IsNoMatchError(err) {
		return Resource{}, fmt.Errorf("resolve resource %q: %w", name, err)
	}
	return Resource{}, r.unknown(name)
}

func (r *Resolver) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deferred.Reset()
}

func (r *Resolver) resolve(name string) (Resource, error) {
	gvr, err := r.resourceFor(strings.ToLower(strings.TrimSpace(name)))
	if err != nil {
		return Resource{}, err
	}
	gvk, err := r.mapper.KindFor(gvr)
	if err != nil {
		return Resource{}, err
	}
	mapping, err := r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return Resource{}, err
	}
	return Resource{
		GVR:        mapping.Resource,
		Kind:       gvk.Kind,
		Namespaced: mapping.Scope.Name() == meta.RESTScopeNameNamespace,
	}, nil
}

// resourceFor follows kubectl: a fully specified name first, then group.resource.
func (r *Resolver) resourceFor(name string) (schema.GroupVersionResource, error) {
	if name == "" {
		return schema.GroupVersionResource{}, &meta.NoResourceMatchError{}
	}
	if gvr, ok := parseSlashed(name); ok {
		return r.mapper.ResourceFor(gvr)
	}
	full, gr := schema.ParseResourceArg(name)
	if full != nil {
		if gvr, err := r.mapper.ResourceFor(*full); err == nil {
			return gvr, nil
		}
	}
	return r.mapper.ResourceFor(gr.WithVersion(""))
}

// parseSlashed reads "group/version/resource" and "version/resource" (core group).
func parseSlashed(name string) (schema.GroupVersionResource, bool) {
	parts := strings.Split(name, "/")
	switch len(parts) {
	case 3:
		return schema.GroupVersionResource{Group: parts[0], Version: parts[1], Resource: parts[2]}, true
	case 2:
		return schema.GroupVersionResource{Version: parts[0], Resource: parts[1]}, true
	}
	return schema.GroupVersionResource{}, false
}
