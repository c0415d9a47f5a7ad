package inspect

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine/internal/trace"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/status"
)

// Env is what the inspection API needs of the engine beside the live versions. Every func is
// safe from any goroutine.
type Env struct {
	// Live lists the live versions, sorted by script name, the serving one of a script first.
	Live func() []Live
	// Resolve resolves a resource as users name it.
	Resolve func(resource string) (dynamicinformer.Resource, error)
	// Read reads an object from the server (a scripting.Client's Get: a missing object is an
	// API NotFound error).
	Read func(ctx context.Context, resource, namespace, name string) (scripting.Object, error)
	// Status is the engine's state API, for the scripts with no live version.
	Status func() status.Status
	// Owner names the replica of the shard ring that owns a key; nil without sharding. Self
	// is this runner's identity then.
	Owner func(key string) string
	Self  string
	// Trace is the engine's recorder, nil with recording off; Pauses its paused scripts.
	Trace  *trace.Recorder
	Pauses *Pauses
	Logger *slog.Logger
	// Audit returns the audit scripts' results for an object (resource canonical, key
	// namespace/name); nil: none audits.
	Audit func(resource, key string) []inspection.AuditResult
}

// Inspector answers the engine's inspection API (package inspection's shapes) from Env. It
// keeps nothing of its own beyond Env, so the engine may make one per question.
type Inspector struct{ env Env }

// New returns an Inspector on env.
func New(env Env) *Inspector { return &Inspector{env: env} }

// Queue shows the work of every live version, or of script's only.
func (in *Inspector) Queue(script string) (inspection.QueueView, error) {
	return Queue(in.env.Live(), in.env.Pauses.Paused, script, time.Now())
}

// Cache lists the objects of resource the live versions' caches hold (key "" for all), or,
// with q.Script set, the objects q.Index files under q.Value in that script's cache.
func (in *Inspector) Cache(resource, key string, q inspection.IndexQuery) (inspection.CacheView, error) {
	res, err := in.resolve(resource)
	if err != nil {
		return inspection.CacheView{}, err
	}
	return Cache(in.env.Live(), res, key, q)
}

// Indexes shows the values each script's index functions computed for one object.
func (in *Inspector) Indexes(resource, key string) (inspection.IndexesView, error) {
	res, err := in.resolve(resource)
	if err != nil {
		return inspection.IndexesView{}, err
	}
	return Indexes(in.env.Live(), res, key)
}

// IndexSummaries lists, for every live version with index functions, its indexes.
func (in *Inspector) IndexSummaries() []inspection.IndexSummary {
	return IndexSummaries(in.env.Live())
}

// Explain tells what happened to one object: the object as the server has it now, whether
// each loaded script is shown it and why not, its audit results, and its last limit trace
// records (inspection.DefaultExplainEvents when limit <= 0). It reads the object from the
// server with the runner's identity, so only when a live version watches resource: the debug API's
// readers must not read, through the runner, objects no script is given (ConfigMaps, Secrets,
// custom resources the runner may get for other reasons).
func (in *Inspector) Explain(ctx context.Context, resource, key string, limit int) (inspection.Explanation, error) {
	res, err := in.resolve(resource)
	if err != nil {
		return inspection.Explanation{}, err
	}
	if limit <= 0 {
		limit = inspection.DefaultExplainEvents
	}
	if !slices.ContainsFunc(in.env.Live(), func(v Live) bool { return watches(v, res.String()) }) {
		return inspection.Explanation{}, fmt.Errorf("explain %s %s: %w: no loaded script watches %s, and explain reads only "+
			"resources a script watches from the API server", res, key, inspection.ErrNotFound, res)
	}
	x := inspection.Explanation{Resource: res.String(), Object: key, Recording: in.env.Trace != nil}
	obj, err := in.fetch(ctx, res, key)
	if err != nil {
		return inspection.Explanation{}, err
	}
	if obj != nil {
		x.Exists, x.Current = true, Redact(res, obj)
	}
	x.Deliveries = Deliveries(in.env.Live(), res, key, obj, in.env.Pauses.Paused)
	x.Deliveries = append(x.Deliveries, in.notServing(x.Deliveries)...)
	if in.env.Owner != nil {
		x.Owner, x.Self = in.env.Owner(key), in.env.Self
	}
	if in.env.Audit != nil {
		x.Audit = in.env.Audit(res.String(), key)
	}
	x.Records, x.Dropped = in.env.Trace.Object(res.String(), key, limit)
	if x.Records == nil {
		x.Records = []inspection.TraceRecord{}
	}
	return x, nil
}

// Subscribe starts a live subscription to the trace; f.Resource may be spelled as users do.
func (in *Inspector) Subscribe(f inspection.TailFilter) (inspection.Subscription, error) {
	if in.env.Trace == nil {
		return nil, inspection.ErrTraceOff
	}
	if f.Resource != "" {
		res, err := in.resolve(f.Resource)
		if err != nil {
			return nil, err
		}
		f.Resource = res.String()
	}
	if f.Script != "" {
		if err := in.loaded(f.Script, "script "+f.Script); err != nil {
			return nil, err
		}
	}
	return in.env.Trace.Subscribe(f), nil
}

// resolve resolves a resource name, the error wrapping inspection.ErrNotFound.
func (in *Inspector) resolve(resource string) (dynamicinformer.Resource, error) {
	res, err := in.env.Resolve(resource)
	if err != nil {
		return res, fmt.Errorf("resource %s: %w: %w", resource, inspection.ErrNotFound, err)
	}
	return res, nil
}

// loaded is nil when script has a live version, else an error saying what (e.g. "pause x")
// found no such script, wrapping inspection.ErrNotFound.
func (in *Inspector) loaded(script, what string) error {
	names := ScriptNames(in.env.Live())
	if slices.Contains(names, script) {
		return nil
	}
	return fmt.Errorf("%s: %w: no such script is loaded%s", what, inspection.ErrNotFound, Suggest(script, names))
}

// fetch reads the object from the server; nil when it does not exist.
func (in *Inspector) fetch(ctx context.Context, res dynamicinformer.Resource, key string) (scripting.Object, error) {
	ns, name, err := SplitKey(res, key)
	if err != nil {
		return nil, err
	}
	obj, err := in.env.Read(ctx, res.String(), ns, name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read %s %s: %w", res, key, err)
	}
	if meta, ok := obj["metadata"].(map[string]any); ok {
		delete(meta, "managedFields") // as in the informers' caches
	}
	return obj, nil
}

// notServing are the deliveries of scripts with no live version: stopped by the memory guard,
// failed to load, or waiting for their resource.
func (in *Inspector) notServing(live []inspection.Delivery) []inspection.Delivery {
	var out []inspection.Delivery
	for _, s := range in.env.Status().Scripts {
		if slices.ContainsFunc(live, func(d inspection.Delivery) bool { return d.Script == s.Name }) {
			continue
		}
		d := inspection.Delivery{Script: s.Name, Version: s.Hash, State: string(s.State)}
		switch s.State {
		case status.ScriptStopped:
			d.Reason, d.Detail = "stopped", "the memory guard stopped the script; it stays stopped until its file changes"
		case status.ScriptFailed, status.ScriptWaiting:
			d.Reason, d.Detail = "not loaded", "the script's content did not load"
			if n := len(s.Loads); n > 0 && s.Loads[n-1].Error != nil {
				d.Detail += ": " + s.Loads[n-1].Error.Message
			}
		default:
			continue
		}
		out = append(out, d)
	}
	return out
}
