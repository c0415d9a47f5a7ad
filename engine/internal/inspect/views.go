package inspect

import (
	"fmt"
	"slices"
	"time"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/scripting"
)

// The views of the live versions' work and caches: Engine.Queue, Cache and Indexes gather
// the live versions and answer with these.

// Queue shows the work of every live version, or of script's only; paused tells which
// scripts are paused.
func Queue(live []Live, paused func(script string) bool, script string, now time.Time) (inspection.QueueView, error) {
	out := inspection.QueueView{Scripts: []inspection.ScriptQueue{}}
	for _, v := range live {
		if script != "" && v.Script() != script {
			continue
		}
		q := inspection.ScriptQueue{Script: v.Script(), Version: v.Hash(), State: v.State(), Paused: paused(v.Script()),
			Backlog: v.Backlog(), Reconcile: v.Book() != nil, Keys: []inspection.KeyState{}}
		if c := v.InFlight(); c != nil {
			running := *c
			running.ElapsedMs = float64(now.Sub(c.Started).Microseconds()) / 1000
			q.InFlight = &running
		}
		if b := v.Book(); b != nil {
			q.Keys, q.Dropped = b.Snapshot(now), b.Dropped()
		}
		out.Scripts = append(out.Scripts, q)
	}
	if script != "" && len(out.Scripts) == 0 {
		return out, fmt.Errorf("script %s: %w: no such script is loaded%s", script, inspection.ErrNotFound, Suggest(script, ScriptNames(live)))
	}
	return out, nil
}

// Cache lists the objects of res the live versions' caches hold (key "" for all), or, with
// q.Script set, the objects q.Index files under q.Value in that script's cache.
func Cache(live []Live, res dynamicinformer.Resource, key string, q inspection.IndexQuery) (inspection.CacheView, error) {
	if key != "" {
		if _, _, err := SplitKey(res, key); err != nil {
			return inspection.CacheView{}, err
		}
	}
	out := inspection.CacheView{Resource: res.String(), Objects: []inspection.CachedObject{}}
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
			c := inspection.CachedObject{Script: v.Script(), Version: v.Hash(), Key: k, ResourceVersion: resourceVersionOf(obj)}
			if key != "" {
				c.Object = Redact(res, obj)
			}
			out.Objects = append(out.Objects, c)
		}
	}
	switch {
	case !watched:
		return out, fmt.Errorf("resource %s: %w: no loaded script watches it", res, inspection.ErrNotFound)
	case key != "" && len(out.Objects) == 0:
		return out, fmt.Errorf("object %s %s: %w: no script's cache holds it%s", res, key, inspection.ErrNotFound, Suggest(key, dedupe(all)))
	}
	return out, nil
}

func cacheByIndex(live []Live, out inspection.CacheView, q inspection.IndexQuery) (inspection.CacheView, error) {
	v, err := Serving(live, q.Script)
	if err != nil {
		return out, err
	}
	if !slices.Contains(v.Indexers(), q.Index) {
		return out, fmt.Errorf("index %s: %w: script %s has no such index function%s", q.Index, inspection.ErrNotFound, q.Script, Suggest(q.Index, v.Indexers()))
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
		out.Objects = append(out.Objects, inspection.CachedObject{Script: v.Script(), Version: v.Hash(), Key: k.Object, ResourceVersion: resourceVersionOf(obj)})
	}
	return out, nil
}

// Indexes shows the values each live version's index functions computed for one object.
func Indexes(live []Live, res dynamicinformer.Resource, key string) (inspection.IndexesView, error) {
	if _, _, err := SplitKey(res, key); err != nil {
		return inspection.IndexesView{}, err
	}
	out := inspection.IndexesView{Resource: res.String(), Object: key, Scripts: []inspection.ScriptIndexes{}}
	var all []string
	for _, v := range live {
		if len(v.Indexers()) == 0 || !watches(v, res.String()) {
			continue
		}
		values, cached := v.Store().Values(res.String(), key)
		all = append(all, v.Store().Keys(res.String())...)
		si := inspection.ScriptIndexes{Script: v.Script(), Version: v.Hash(), Cached: cached, Values: map[string][]string{}}
		for i, name := range v.Indexers() {
			si.Values[name] = []string{}
			if i < len(values) && values[i] != nil {
				si.Values[name] = values[i]
			}
		}
		out.Scripts = append(out.Scripts, si)
	}
	if len(out.Scripts) == 0 {
		return out, fmt.Errorf("resource %s: %w: no loaded script watching it has index functions", res, inspection.ErrNotFound)
	}
	if !slices.ContainsFunc(out.Scripts, func(s inspection.ScriptIndexes) bool { return s.Cached }) {
		return out, fmt.Errorf("object %s %s: %w: no script's cache holds it%s", res, key, inspection.ErrNotFound, Suggest(key, dedupe(all)))
	}
	return out, nil
}

func resourceVersionOf(obj scripting.Object) string {
	meta, _ := obj["metadata"].(map[string]any)
	rv, _ := meta["resourceVersion"].(string)
	return rv
}
