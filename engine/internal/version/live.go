package version

import (
	"github.com/jsinformer/jsinformer/engine/internal/enginemetrics"
	"github.com/jsinformer/jsinformer/engine/internal/inspect"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/internal/scriptcache"
	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/status"
)

// What other goroutines read of a live version: the inspection API (inspect.Live), the state
// API (status.Live), the backlog series (enginemetrics.Backlogged) and the memory guard's
// measurements. Each is safe from any goroutine.

var (
	_ inspect.Live             = (*Version)(nil)
	_ status.Live              = (*Version)(nil)
	_ enginemetrics.Backlogged = (*Version)(nil)
)

// Subscriptions are v's subscriptions once subscribed; nil before.
func (v *Version) Subscriptions() []*Subscription { return v.insp.Subscriptions() }

// State is v's state as the views show it.
func (v *Version) State() string { return v.CurrentState().String() }

// queued is how many events wait for v's worker and index stage.
func (v *Version) queued() int {
	n := v.queue.Len()
	if v.intake != nil && v.intake != v.queue {
		n += v.intake.Len()
	}
	return n
}

// Backlog is how many events wait for v's worker, index stage and a held event included.
func (v *Version) Backlog() int { return v.queued() + v.insp.Held() }

// QueueDepth is v's script, content and the events queued for it (enginemetrics.Backlogged).
func (v *Version) QueueDepth() (script, hash string, queued int) { return v.name, v.hash, v.queued() }

// Status is v's VersionStatus now (status.Live).
func (v *Version) Status() status.VersionStatus {
	return status.VersionStatus{Hash: v.hash, State: status.VersionState(v.CurrentState().String()), Started: v.started,
		Objects: v.store.Size(), Queued: v.queued(), Net: v.def.Net, Outbox: v.outboxStatus()}
}

// InFlight is the worker's call running now.
func (v *Version) InFlight() *inspection.CallInFlight { return v.recorder().InFlight() }

// Book is v's reconcile keys' book; nil without reconcile.
func (v *Version) Book() *inspect.KeyBook {
	if v.reconciler == nil {
		return nil
	}
	return v.reconciler.Book()
}

// Reconciled is the resource of v's reconcile keys; "" without reconcile.
func (v *Version) Reconciled() string {
	if v.reconciler == nil {
		return ""
	}
	return v.reconciler.Resource()
}

// Requeue forgets key's backoff and queues it for reconcile now.
func (v *Version) Requeue(key, reason string) {
	if v.reconciler != nil {
		v.reconciler.Requeue(key, reason)
	}
}

// Do queues fn for v's worker, after the events already queued.
func (v *Version) Do(fn func()) bool { return v.queue.Push(Event{Kind: EventDo, Do: fn}) }

// Done is closed once v's worker (and index stage) have returned.
func (v *Version) Done() <-chan struct{} { return v.done }

// Store is v's cache and indexes.
func (v *Version) Store() *scriptcache.Store { return v.store }

// Indexers names v's index functions.
func (v *Version) Indexers() []string { return v.def.Indexers }

// Watches are v's resolved watches, an unwatched version's (Config.Unwatched) included: what
// its webhooks cover, which explain may read.
func (v *Version) Watches() []inspect.Watch {
	out := make([]inspect.Watch, len(v.targets))
	for i, t := range v.targets {
		out[i] = inspect.Watch{Resource: t.Resource, Key: t.Key}
	}
	return out
}

// RequestMemory asks each runtime of v for a measurement after its next call.
func (v *Version) RequestMemory() {
	for _, s := range v.runtimes() {
		s.RequestMemoryUsage()
	}
}

// Memory sums v's runtimes' latest measurements; seq changes whenever one of them does.
func (v *Version) Memory() (bytes int64, seq uint64, truncated bool) {
	for _, s := range v.runtimes() {
		m := s.MemoryUsage()
		bytes, seq, truncated = bytes+m.Bytes, seq+m.Seq, truncated || m.Truncated
	}
	return bytes, seq, truncated
}

// runtimes are v's Scripts: the worker's, the index stage's, the reconcile workers' and the
// admission ones.
func (v *Version) runtimes() []*scripting.Script {
	out := append([]*scripting.Script{v.script}, v.indexer.Runtimes()...)
	if v.reconciler != nil {
		out = append(out, v.reconciler.Runtimes()...)
	}
	if v.admit != nil {
		out = append(out, v.admit.all...)
	}
	return out
}

// Serve makes v current, with its load's entry ls in the book in the same step (Book.Serving):
// the state API never shows one without the other.
func (v *Version) Serve(ls status.LoadStatus) {
	set := func() { v.state.Store(int32(StateCurrent)) }
	if v.book == nil {
		set()
		return
	}
	v.book.Serving(v.name, ls, set)
}
