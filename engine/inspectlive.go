package engine

import (
	"sort"
	"time"

	"github.com/jsinformer/jsinformer/engine/internal/inspect"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/internal/scriptcache"
)

// The inspection views read the live versions through inspect.Live (package
// engine/internal/inspect gathers the views); this file is the versions' side, and the
// engine's methods that hand the live versions over. Live versions come from needs, which the
// loader keeps under its own mutex.

// Queue shows the work of every live version, or of script's only. Safe for concurrent use.
func (e *Engine) Queue(script string) (inspection.QueueView, error) {
	return inspect.Queue(e.live(), e.pauses.Paused, script, time.Now())
}

// Cache lists the objects of resource the live versions' caches hold (key "" for all), or,
// with q.Script set, the objects q.Index files under q.Value in that script's cache. Safe for
// concurrent use.
func (e *Engine) Cache(resource, key string, q inspection.IndexQuery) (inspection.CacheView, error) {
	res, err := e.resolveForInspect(resource)
	if err != nil {
		return inspection.CacheView{}, err
	}
	return inspect.Cache(e.live(), res, key, q)
}

// Indexes shows the values each script's index functions computed for one object. Safe for
// concurrent use.
func (e *Engine) Indexes(resource, key string) (inspection.IndexesView, error) {
	res, err := e.resolveForInspect(resource)
	if err != nil {
		return inspection.IndexesView{}, err
	}
	return inspect.Indexes(e.live(), res, key)
}

// IndexSummaries lists, for every live version with index functions, its indexes; the keys
// of one value are asked of Cache with an inspection.IndexQuery. Safe for concurrent use.
func (e *Engine) IndexSummaries() []inspection.IndexSummary { return inspect.IndexSummaries(e.live()) }

// live lists the live versions for the views, sorted by script name, the serving one of a
// script first.
func (e *Engine) live() []inspect.Live {
	vs := e.needs.versions()
	out := make([]inspect.Live, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// versions lists the live versions (syncing, current, or draining not yet removed), sorted by
// script name, the serving one of a script first.
func (n *needs) versions() []*version {
	n.mu.Lock()
	out := make([]*version, 0, len(n.byVersion))
	for v := range n.byVersion {
		out = append(out, v)
	}
	n.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].name != out[j].name {
			return out[i].name < out[j].name
		}
		return out[i].currentState() > out[j].currentState() // current before syncing
	})
	return out
}

// scriptNames are the scripts with a live version, sorted.
func (e *Engine) scriptNames() []string { return inspect.ScriptNames(e.live()) }

// servingVersion is the version serving script, or an error saying why there is none.
func (e *Engine) servingVersion(script string) (*version, error) {
	v, err := inspect.Serving(e.live(), script)
	if err != nil {
		return nil, err
	}
	return v.(*version), nil
}

// subscriptionOf is v's subscription to resource (as users name it).
func (e *Engine) subscriptionOf(v *version, resource string) (*subscription, error) {
	res, err := e.resolveForInspect(resource)
	if err != nil {
		return nil, err
	}
	if _, err := inspect.WatchOf(v, res); err != nil {
		return nil, err
	}
	for _, sub := range v.subscriptions() {
		if sub.cache.Resource == res.String() {
			return sub, nil
		}
	}
	return nil, inspection.ErrNotFound // unreachable: WatchOf found it among the same subscriptions
}

// subscriptions are v's subscriptions once subscribed; nil before.
func (v *version) subscriptions() []*subscription {
	if v.insp == nil {
		return nil
	}
	if p := v.insp.subs.Load(); p != nil {
		return *p
	}
	return nil
}

// inspect.Live, for the views.

// Script is v's script name.
func (v *version) Script() string { return v.name }

// Hash is v's content hash.
func (v *version) Hash() string { return v.hash }

// State is v's state as the views show it.
func (v *version) State() string { return v.currentState().String() }

// Backlog is how many events wait for v's worker, index stage and a held event included.
func (v *version) Backlog() int {
	n := v.queue.len()
	if v.intake != v.queue {
		n += v.intake.len()
	}
	if v.insp != nil {
		n += int(v.insp.held.Load())
	}
	return n
}

// InFlight is the worker's call running now.
func (v *version) InFlight() *inspection.CallInFlight {
	if v.insp == nil {
		return nil
	}
	return v.insp.inflight.Load()
}

// Reconciles reports whether v has reconcile workers.
func (v *version) Reconciles() bool { return v.reconciler != nil }

// Keys are v's reconcile keys now.
func (v *version) Keys(now time.Time) []inspection.KeyState {
	if v.reconciler == nil {
		return nil
	}
	return v.reconciler.insp.book.Snapshot(now)
}

// Store is v's cache and indexes.
func (v *version) Store() *scriptcache.Store { return v.store }

// Indexers names v's index functions.
func (v *version) Indexers() []string { return v.def.Indexers }

// Watches are v's resolved watches once subscribed.
func (v *version) Watches() []inspect.Watch {
	subs := v.subscriptions()
	out := make([]inspect.Watch, len(subs))
	for i, sub := range subs {
		out[i] = inspect.Watch{Resource: sub.target.resource, Key: sub.target.key}
	}
	return out
}
