package engine

import (
	"sort"

	"github.com/jsinformer/jsinformer/engine/internal/inspect"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/internal/scriptcache"
)

// The versions' side of the inspection API: a version implements inspect.Live. Live versions
// come from needs, which the loader keeps under its own mutex.

// live lists the live versions for the inspection API, sorted by script name, the serving one
// of a script first.
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

// subscriptions are v's subscriptions once subscribed; nil before.
func (v *version) subscriptions() []*subscription { return v.insp.Subscriptions() }

var _ inspect.Live = (*version)(nil)

// Script is v's script name.
func (v *version) Script() string { return v.name }

// Hash is v's content hash.
func (v *version) Hash() string { return v.hash }

// State is v's state as the views show it.
func (v *version) State() string { return v.currentState().String() }

// Backlog is how many events wait for v's worker, index stage and a held event included.
func (v *version) Backlog() int {
	n := v.queue.Len()
	if v.intake != v.queue {
		n += v.intake.Len()
	}
	n += v.insp.Held()
	return n
}

// InFlight is the worker's call running now.
func (v *version) InFlight() *inspection.CallInFlight { return v.recorder().InFlight() }

// Book is v's reconcile keys' book; nil without reconcile.
func (v *version) Book() *inspect.KeyBook {
	if v.reconciler == nil {
		return nil
	}
	return v.reconciler.Book()
}

// Reconciled is the resource of v's reconcile keys; "" without reconcile.
func (v *version) Reconciled() string {
	if v.reconciler == nil {
		return ""
	}
	return v.reconciler.Resource()
}

// Requeue forgets key's backoff and queues it for reconcile now.
func (v *version) Requeue(key, reason string) {
	if v.reconciler != nil {
		v.reconciler.Requeue(key, reason)
	}
}

// Do queues fn for v's worker, after the events already queued.
func (v *version) Do(fn func()) bool { return v.queue.Push(event{Kind: eventDo, Do: fn}) }

// Done is closed once v's worker (and index stage) have returned.
func (v *version) Done() <-chan struct{} { return v.done }

// Store is v's cache and indexes.
func (v *version) Store() *scriptcache.Store { return v.store }

// Indexers names v's index functions.
func (v *version) Indexers() []string { return v.def.Indexers }

// Watches are v's resolved watches once subscribed.
func (v *version) Watches() []inspect.Watch {
	subs := v.subscriptions()
	out := make([]inspect.Watch, len(subs))
	for i, sub := range subs {
		out[i] = inspect.Watch{Resource: sub.Target.Resource, Key: sub.Target.Key}
	}
	return out
}
