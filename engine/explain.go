package engine

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine/internal/inspect"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/status"
)

// Explain tells what happened to one object (key is namespace/name, or name when
// cluster-scoped): the object as the server has it now, whether each loaded script is shown it
// and why not, and its last limit trace records (inspection.DefaultExplainEvents when limit <= 0).
// Safe for concurrent use; it reads the object from the server.
func (e *Engine) Explain(ctx context.Context, resource, key string, limit int) (inspection.Explanation, error) {
	res, err := e.resolveForInspect(resource)
	if err != nil {
		return inspection.Explanation{}, err
	}
	if limit <= 0 {
		limit = inspection.DefaultExplainEvents
	}
	x := inspection.Explanation{Resource: res.String(), Object: key, Recording: e.trace != nil}
	obj, err := e.fetch(ctx, res, key)
	if err != nil {
		return inspection.Explanation{}, err
	}
	if obj != nil {
		x.Exists, x.Current = true, inspect.Redact(res, obj)
	}
	x.Deliveries = e.deliveries(res, key, obj)
	if e.shard != nil {
		x.Owner, x.Self = e.shard.Owner(key), e.cfg.Sharding.Identity
	}
	x.Records, x.Dropped = e.trace.Object(res.String(), key, limit)
	if x.Records == nil {
		x.Records = []inspection.TraceRecord{}
	}
	return x, nil
}

// Subscribe starts a live subscription to the trace; f.Resource may be spelled as users do.
// A subscriber that falls behind misses records (Subscription.Missed) rather than slowing a
// worker down.
func (e *Engine) Subscribe(f inspection.TailFilter) (inspection.Subscription, error) {
	if e.trace == nil {
		return nil, inspection.ErrTraceOff
	}
	if f.Resource != "" {
		res, err := e.resolveForInspect(f.Resource)
		if err != nil {
			return nil, err
		}
		f.Resource = res.String()
	}
	if f.Script != "" && !slices.Contains(e.scriptNames(), f.Script) {
		return nil, fmt.Errorf("script %s: %w: no such script is loaded%s", f.Script, inspection.ErrNotFound, inspect.Suggest(f.Script, e.scriptNames()))
	}
	return e.trace.Subscribe(f), nil
}

// resolveForInspect resolves a resource name, the error wrapping inspection.ErrNotFound.
func (e *Engine) resolveForInspect(resource string) (dynamicinformer.Resource, error) {
	res, err := e.resolver.Resolve(resource)
	if err != nil {
		return res, fmt.Errorf("resource %s: %w: %w", resource, inspection.ErrNotFound, err)
	}
	return res, nil
}

// fetch reads the object from the server; nil when it does not exist.
func (e *Engine) fetch(ctx context.Context, res dynamicinformer.Resource, key string) (scripting.Object, error) {
	ns, name, err := inspect.SplitKey(res, key)
	if err != nil {
		return nil, err
	}
	// The scripts' client, so a driven engine reads its own cluster; explain's read is no
	// script's, so it logs under the engine's logger.
	obj, err := e.newClient(e.logger).Get(ctx, res.String(), ns, name)
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

// deliveries judges, for every live version and every script not serving, whether it is
// shown the object.
func (e *Engine) deliveries(res dynamicinformer.Resource, key string, obj scripting.Object) []inspection.Delivery {
	out := inspect.Deliveries(e.live(), res, key, obj, e.pauses.Paused)
	return append(out, e.notServing(out)...)
}

// notServing are the deliveries of scripts with no live version: stopped by the memory guard,
// failed to load, or waiting for their resource.
func (e *Engine) notServing(live []inspection.Delivery) []inspection.Delivery {
	var out []inspection.Delivery
	for _, s := range e.Status().Scripts {
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
