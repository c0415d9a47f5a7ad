package dynamicinformer

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

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

// ResetEvery is the shortest time between two re-discoveries: a name that is not found
// triggers one at most this often, and is answered from memory in between, so a misspelt
// resource in a handler does not cost a full discovery per event.
const ResetEvery = 5 * time.Second

// Resolver resolves resource names against the server's discovery information. Safe for
// concurrent use.
type Resolver struct {
	cached   discovery.CachedDiscoveryInterface
	mapper   meta.RESTMapper // shortcut-expanding view of deferred
	deferred meta.ResettableRESTMapper
	now      func() time.Time
	every    time.Duration // ResetEvery, or what WithoutThrottle set

	mu        sync.Mutex // guards the fields below; held across a reset so concurrent misses do one
	gen       uint64     // re-discoveries so far
	lastReset time.Time
	misses    map[string]miss // names not found since the last re-discovery
}

type miss struct {
	gen uint64
	err error
}

// NewResolver builds a Resolver over a discovery client; results are cached until a miss.
func NewResolver(client discovery.DiscoveryInterface, logger *slog.Logger) *Resolver {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cached := memory.NewMemCacheClient(client)
	deferred := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	warn := func(msg string) { logger.Warn(msg) }
	return &Resolver{cached: cached, mapper: restmapper.NewShortcutExpander(deferred, cached, warn), deferred: deferred,
		now: time.Now, every: ResetEvery, misses: map[string]miss{}}
}

// WithoutThrottle makes every miss re-discover at once: for discovery that costs nothing, an
// in-memory cluster's, where a CRD created a moment ago must resolve at once. It returns r.
func (r *Resolver) WithoutThrottle() *Resolver {
	r.every = 0
	return r
}

// Resolve maps a name as kubectl accepts it, plus the "group/version/resource" and
// "version/resource" spellings of --gvr, to a Resource. A name not found triggers a
// re-discovery (for CRDs created since the last one), at most once per ResetEvery, before
// failing with ErrUnknownResource and the closest known names; until the next re-discovery
// is due, the same name fails again from memory.
func (r *Resolver) Resolve(name string) (Resource, error) {
	gen, err := r.knownMiss(name)
	if err != nil {
		return Resource{}, err
	}
	res, err := r.resolve(name)
	if err != nil && meta.IsNoMatchError(err) && r.reset(gen) {
		res, err = r.resolve(name)
	}
	if err == nil {
		return res, nil
	}
	if !meta.IsNoMatchError(err) {
		return Resource{}, fmt.Errorf("resolve resource %q: %w", name, err)
	}
	err = r.unknown(name)
	r.mu.Lock()
	r.misses[name] = miss{gen: r.gen, err: err}
	r.mu.Unlock()
	return Resource{}, err
}

// knownMiss returns the error of a name that was not found since the last re-discovery, while
// no new one is due; and the current generation.
func (r *Resolver) knownMiss(name string) (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m, ok := r.misses[name]; ok && m.gen == r.gen && r.now().Sub(r.lastReset) < r.every {
		return r.gen, m.err
	}
	return r.gen, nil
}

// reset re-discovers unless another lookup did since generation seen (then the caller just
// looks again) or the last re-discovery is too recent. It reports whether to look again.
func (r *Resolver) reset(seen uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gen != seen {
		return true
	}
	if now := r.now(); now.Sub(r.lastReset) >= r.every {
		r.deferred.Reset()
		r.gen++
		r.lastReset = now
		clear(r.misses)
		return true
	}
	return false
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
