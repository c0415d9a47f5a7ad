package engine

import (
	"fmt"
	"slices"
	"time"

	"github.com/jsinformer/jsinformer/engine/internal/inspect"
)

// QueueView is the answer of Queue.
type QueueView struct {
	Scripts []ScriptQueue `json:"scripts"`
}

// ScriptQueue is one live version's work: events waiting for its handler worker, the call it
// is running, and its reconcile keys.
type ScriptQueue struct {
	Script  string `json:"script"`
	Version string `json:"version"`
	State   string `json:"state"`
	Paused  bool   `json:"paused"`
	// Backlog is the number of events queued for the handler worker (index stage included).
	Backlog   int           `json:"backlog"`
	InFlight  *CallInFlight `json:"inFlight,omitempty"`
	Reconcile bool          `json:"reconcile"`
	Keys      []KeyState    `json:"keys"` // reconcile keys queued, waiting to retry, or running
}

// Queue shows the work of every live version, or of script's only. Safe for concurrent use.
func (e *Engine) Queue(script string) (QueueView, error) {
	now := time.Now()
	out := QueueView{Scripts: []ScriptQueue{}}
	for _, v := range e.needs.versions() {
		if script != "" && v.name != script {
			continue
		}
		q := ScriptQueue{Script: v.name, Version: v.hash, State: v.currentState().String(), Paused: e.pauses.Paused(v.name),
			Backlog: v.queue.len(), Reconcile: v.reconciler != nil, Keys: []KeyState{}}
		if v.intake != v.queue {
			q.Backlog += v.intake.len()
		}
		if v.insp != nil {
			q.Backlog += int(v.insp.held.Load())
			if c := v.insp.inflight.Load(); c != nil {
				running := *c
				running.ElapsedMs = float64(now.Sub(c.Started).Microseconds()) / 1000
				q.InFlight = &running
			}
		}
		if v.reconciler != nil {
			q.Keys = v.reconciler.insp.book.Snapshot(now)
		}
		out.Scripts = append(out.Scripts, q)
	}
	if script != "" && len(out.Scripts) == 0 {
		return out, fmt.Errorf("script %s: %w: no such script is loaded%s", script, ErrNotFound, suggest(script, e.scriptNames()))
	}
	return out, nil
}

// CacheView is the answer of Cache: what each script's ctx.cache holds of a resource.
type CacheView struct {
	Resource string         `json:"resource"`
	Objects  []CachedObject `json:"objects"`
}

// CachedObject is one object in one script version's cache. Object is set when one object was
// asked for (Secret data redacted).
type CachedObject struct {
	Script          string         `json:"script"`
	Version         string         `json:"version"`
	Key             string         `json:"key"`
	ResourceVersion string         `json:"resourceVersion,omitempty"`
	Object          map[string]any `json:"object,omitempty"`
}

// IndexQuery selects the objects one script's index function filed under a value.
type IndexQuery struct {
	Script, Index, Value string
}

// Cache lists the objects of resource the live versions' caches hold (key "" for all), or,
// with q.Script set, the objects q.Index files under q.Value in that script's cache. Safe for
// concurrent use.
func (e *Engine) Cache(resource, key string, q IndexQuery) (CacheView, error) {
	res, err := e.resolveForInspect(resource)
	if err != nil {
		return CacheView{}, err
	}
	if key != "" {
		if _, _, err := splitKey(res, key); err != nil {
			return CacheView{}, err
		}
	}
	out := CacheView{Resource: res.String(), Objects: []CachedObject{}}
	if q.Script != "" {
		return e.cacheByIndex(out, q)
	}
	var all []string
	watched := false
	for _, v := range e.needs.versions() {
		if !v.watches(res.String()) {
			continue
		}
		watched = true
		keys := v.store.Keys(res.String())
		all = append(all, keys...)
		for _, k := range keys {
			if key != "" && k != key {
				continue
			}
			obj := v.store.Get(res.String(), k)
			c := CachedObject{Script: v.name, Version: v.hash, Key: k, ResourceVersion: resourceVersionOf(obj)}
			if key != "" {
				c.Object = inspect.Redact(res, obj)
			}
			out.Objects = append(out.Objects, c)
		}
	}
	switch {
	case !watched:
		return out, fmt.Errorf("resource %s: %w: no loaded script watches it", res, ErrNotFound)
	case key != "" && len(out.Objects) == 0:
		return out, fmt.Errorf("object %s %s: %w: no script's cache holds it%s", res, key, ErrNotFound, suggest(key, dedupe(all)))
	}
	return out, nil
}

func (e *Engine) cacheByIndex(out CacheView, q IndexQuery) (CacheView, error) {
	v, err := e.servingVersion(q.Script)
	if err != nil {
		return out, err
	}
	if !slices.Contains(v.def.Indexers, q.Index) {
		return out, fmt.Errorf("index %s: %w: script %s has no such index function%s", q.Index, ErrNotFound, q.Script, suggest(q.Index, v.def.Indexers))
	}
	keys, err := v.store.ByIndex(q.Index, q.Value)
	if err != nil {
		return out, err
	}
	for _, k := range keys {
		if k.Resource != out.Resource {
			continue
		}
		obj := v.store.Get(k.Resource, k.Object)
		out.Objects = append(out.Objects, CachedObject{Script: v.name, Version: v.hash, Key: k.Object, ResourceVersion: resourceVersionOf(obj)})
	}
	return out, nil
}

// IndexesView is the answer of Indexes.
type IndexesView struct {
	Resource string          `json:"resource"`
	Object   string          `json:"object"`
	Scripts  []ScriptIndexes `json:"scripts"`
}

// ScriptIndexes is what one script version's index functions computed for the object: index
// name to values. An index the object is not filed under (no values, or the function threw)
// has an empty list.
type ScriptIndexes struct {
	Script  string              `json:"script"`
	Version string              `json:"version"`
	Cached  bool                `json:"cached"`
	Values  map[string][]string `json:"values"`
}

// Indexes shows the values each script's index functions computed for one object. Safe for
// concurrent use.
func (e *Engine) Indexes(resource, key string) (IndexesView, error) {
	res, err := e.resolveForInspect(resource)
	if err != nil {
		return IndexesView{}, err
	}
	if _, _, err := splitKey(res, key); err != nil {
		return IndexesView{}, err
	}
	out := IndexesView{Resource: res.String(), Object: key, Scripts: []ScriptIndexes{}}
	var all []string
	for _, v := range e.needs.versions() {
		if len(v.def.Indexers) == 0 || !v.watches(res.String()) {
			continue
		}
		values, cached := v.store.Values(res.String(), key)
		all = append(all, v.store.Keys(res.String())...)
		si := ScriptIndexes{Script: v.name, Version: v.hash, Cached: cached, Values: map[string][]string{}}
		for i, name := range v.def.Indexers {
			si.Values[name] = []string{}
			if i < len(values) && values[i] != nil {
				si.Values[name] = values[i]
			}
		}
		out.Scripts = append(out.Scripts, si)
	}
	if len(out.Scripts) == 0 {
		return out, fmt.Errorf("resource %s: %w: no loaded script watching it has index functions", res, ErrNotFound)
	}
	if !slices.ContainsFunc(out.Scripts, func(s ScriptIndexes) bool { return s.Cached }) {
		return out, fmt.Errorf("object %s %s: %w: no script's cache holds it%s", res, key, ErrNotFound, suggest(key, dedupe(all)))
	}
	return out, nil
}

// watches reports whether v subscribes to resource (canonical spelling).
func (v *version) watches(resource string) bool {
	return slices.ContainsFunc(v.subscriptions(), func(s *subscription) bool { return s.cache.Resource == resource })
}

func dedupe(names []string) []string {
	slices.Sort(names)
	return slices.Compact(names)
}
