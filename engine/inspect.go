package engine

import (
	"context"

	"github.com/jsinformer/jsinformer/engine/internal/inspect"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/scripting"
)

// The inspection API (package inspection's shapes; package debugapi serves it). Package
// engine/internal/inspect answers it from the live versions (each an inspect.Live), the recorder
// and the pauses; these methods hand it over. Each is safe for concurrent use.

// live lists the live versions for the inspection API, sorted by script name, the serving one
// of a script first.
func (e *Engine) live() []inspect.Live {
	vs := e.needs.versions()
	out := make([]inspect.Live, len(vs))
	for i, v := range vs {
		out[i] = v.ver // the value the book and the metrics hold
	}
	return out
}

// inspector is the inspection API on e. It keeps nothing of its own, so one is made per
// question.
func (e *Engine) inspector() *inspect.Inspector {
	env := inspect.Env{Live: e.live, Resolve: e.resolver.Resolve, Status: e.Status, Trace: e.trace, Pauses: e.pauses, Logger: e.logger,
		// The scripts' client, so a driven engine reads its own cluster; explain's read is no
		// script's, so it logs under the engine's logger.
		Read: func(ctx context.Context, resource, namespace, name string) (scripting.Object, error) {
			return e.newClient(e.logger).Get(ctx, resource, namespace, name)
		},
		Audit: e.objectAudit}
	if e.shard != nil {
		env.Owner, env.Self = e.shard.Owner, e.cfg.Sharding.Identity
	}
	return inspect.New(env)
}

// Queue shows the work of every live version, or of script's only.
func (e *Engine) Queue(script string) (inspection.QueueView, error) {
	return e.inspector().Queue(script)
}

// Cache lists the objects of resource the live versions' caches hold (key "" for all), or,
// with q.Script set, the objects q.Index files under q.Value in that script's cache.
func (e *Engine) Cache(resource, key string, q inspection.IndexQuery) (inspection.CacheView, error) {
	return e.inspector().Cache(resource, key, q)
}

// Indexes shows the values each script's index functions computed for one object.
func (e *Engine) Indexes(resource, key string) (inspection.IndexesView, error) {
	return e.inspector().Indexes(resource, key)
}

// IndexSummaries lists, for every live version with index functions, its indexes; the keys
// of one value are asked of Cache with an IndexQuery.
func (e *Engine) IndexSummaries() []inspection.IndexSummary { return e.inspector().IndexSummaries() }

// Explain tells what happened to one object (key is namespace/name, or name when
// cluster-scoped): the object as the server has it now, whether each loaded script is shown it
// and why not, each audit script's result for it, and its last limit trace records
// (inspection.DefaultExplainEvents when limit <= 0). It reads the object from the server.
func (e *Engine) Explain(ctx context.Context, resource, key string, limit int) (inspection.Explanation, error) {
	return e.inspector().Explain(ctx, resource, key, limit)
}

// Subscribe starts a live subscription to the trace; f.Resource may be spelled as users do.
// A subscriber that falls behind misses records (Subscription.Missed) rather than slowing a
// worker down. With recording off it returns inspection.ErrTraceOff.
func (e *Engine) Subscribe(f inspection.TailFilter) (inspection.Subscription, error) {
	return e.inspector().Subscribe(f)
}

// Retry reconciles key of script now: its backoff is forgotten and it is queued at once. The
// key must be queued, waiting to retry, or the key of an object in the script's cache.
func (e *Engine) Retry(script, key string) error { return e.inspector().Retry(script, key) }

// Pause holds script's events and reconcile keys until Resume; it reports false when the
// script was paused already.
func (e *Engine) Pause(script string) (bool, error) { return e.inspector().Pause(script) }

// Resume lets a paused script go on; it reports false when the script was not paused.
func (e *Engine) Resume(script string) (bool, error) { return e.inspector().Resume(script) }

// Replay calls script's handler again with its cached resource object key (namespace/name)
// and returns what the call did; with dryRun its writes go with dryRun=All. It waits for the
// events queued before it.
func (e *Engine) Replay(ctx context.Context, script, resource, key string, dryRun bool) (inspection.TraceRecord, error) {
	return e.inspector().Replay(ctx, script, resource, key, dryRun)
}
