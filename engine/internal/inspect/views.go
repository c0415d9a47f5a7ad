package inspect

import (
	"fmt"
	"slices"
	"time"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/scripting"
)

// The views of the live versions' work and caches: Engine.Queue, Cache and Indexes gather
// the live versions and answer with these.

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

// Queue shows the work of every live version, or of script's only; paused tells which
// scripts are paused.
func Queue(live []Live, paused func(script string) bool, script string, now time.Time) (QueueView, error) {
	out := QueueView{Scripts: []ScriptQueue{}}
	for _, v := range live {
		if script != "" && v.Script() != script {
			continue
		}
		q := ScriptQueue{Script: v.Script(), Version: v.Hash(), State: v.State(), Paused: paused(v.Script()),
			Backlog: v.Backlog(), Reconcile: v.Reconciles(), Keys: []KeyState{}}
		if c := v.InFlight(); c != nil {
			running := *c
			running.ElapsedMs = float64(now.Sub(c.Started).Microseconds()) / 1000
			q.InFlight = &running
		}
		if v.Reconciles() {
			q.Keys = v.Keys(now)
		}
		out.Scripts = append(out.Scripts, q)
	}
	if script != "" && len(out.Scripts) == 0 {
		return out, fmt.Errorf("script %s: %w: no such script is loaded%s", script, ErrNotFound, Suggest(script, ScriptNames(live)))
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

// Cache lists the objects of res the live versions' caches hold (key "" for all), or, with
// q.Script set, the objects q.Index files under q.Value in that script's cache.
func Cache(live []Live, res dynamicinformer.Resource, key string, q IndexQuery) (CacheView, error) {
	if key != "" {
		if _, _, err := SplitKey(res, key); err != nil {
			return CacheView{}, err
		}
	}
	out := CacheView{Resource: res.String(), Objects: []CachedObject{}}
	if q.Script != "" {
		return cacheByIndex(live, out, q)
	}
	var all []string
	watched := false
	for _, v := range live {
		if !watches(v, res.String()) {
			continue
		}
		watched = true
		keys := v.Store().Keys(res.String())
		all = append(all, keys...)
		for _, k := range keys {
			if key != "" && k != key {
				continue
			}
			obj := v.Store().Get(res.String(), k)
			c := CachedObject{Script: v.Script(), Version: v.Hash(), Key: k, ResourceVersion: resourceVersionOf(obj)}
			if key != "" {
				c.Object = Redact(res, obj)
			}
			out.Objects = append(out.Objects, c)
		}
	}
	switch {
	case !watched:
		return out, fmt.Errorf("resource %s: %w: no loaded script watches it", res, ErrNotFound)
	case key != "" && len(out.Objects) == 0:
		return out, fmt.Errorf("object %s %s: %w: no script's cache holds it%s", res, key, ErrNotFound, Suggest(key, dedupe(all)))
	}
	return out, nil
}

func cacheByIndex(live []Live, out CacheView, q IndexQuery) (CacheView, error) {
	v, err := Serving(live, q.Script)
	if err != nil {
		return out, err
	}
	if !slices.Contains(v.Indexers(), q.Index) {
		return out, fmt.Errorf("index %s: %w: script %s has no such index function%s", q.Index, ErrNotFound, q.Script, Suggest(q.Index, v.Indexers()))
	}
	keys, err := v.Store().ByIndex(q.Index, q.Value)
	if err != nil {
		return out, err
	}
	for _, k := range keys {
		if k.Resource != out.Resource {
			continue
		}
		obj := v.Store().Get(k.Resource, k.Object)
		out.Objects = append(out.Objects, CachedObject{Script: v.Script(), Version: v.Hash(), Key: k.Object, ResourceVersion: resourceVersionOf(obj)})
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

// Indexes shows the values each live version's index functions computed for one object.
func Indexes(live []Live, res dynamicinformer.Resource, key string) (IndexesView, error) {
	if _, _, err := SplitKey(res, key); err != nil {
		return IndexesView{}, err
	}
	out := IndexesView{Resource: res.String(), Object: key, Scripts: []ScriptIndexes{}}
	var all []string
	for _, v := range live {
		if len(v.Indexers()) == 0 || !watches(v, res.String()) {
			continue
		}
		values, cached := v.Store().Values(res.String(), key)
		all = append(all, v.Store().Keys(res.String())...)
		si := ScriptIndexes{Script: v.Script(), Version: v.Hash(), Cached: cached, Values: map[string][]string{}}
		for i, name := range v.Indexers() {
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
		return out, fmt.Errorf("object %s %s: %w: no script's cache holds it%s", res, key, ErrNotFound, Suggest(key, dedupe(all)))
	}
	return out, nil
}

func resourceVersionOf(obj scripting.Object) string {
	meta, _ := obj["metadata"].(map[string]any)
	rv, _ := meta["resourceVersion"].(string)
	return rv
}
