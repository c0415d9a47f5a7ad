package engine

import (
	"context"
	"fmt"

	"github.com/jsinformer/jsinformer/inspection"
)

// Replay: the debug API asks a script's current version to call its handler again with the
// object its cache holds. The request travels as an event on the worker's queue, so it runs on
// the worker, after the events already queued, like any call.

type replayRequest struct {
	dryRun bool
	reply  chan replayResult // capacity 1: the worker never waits for the asker
}

type replayResult struct {
	rec inspection.TraceRecord
	err error
}

// replay runs on the worker: onAdd with the cached object, or onUpdate(obj, obj) for a script
// that has no onAdd.
func (v *version) replay(ev event) {
	req := ev.replay
	kind := eventAdd
	if !v.def.OnAdd {
		kind = eventUpdate
	}
	obj := v.store.Get(ev.sub.cache.Resource, ev.key)
	switch {
	case !v.def.OnAdd && !v.def.OnUpdate:
		req.reply <- replayResult{err: fmt.Errorf("replay %s: the script has neither onAdd nor onUpdate", v.name)}
		return
	case obj == nil:
		req.reply <- replayResult{err: fmt.Errorf("replay %s: %w: %s %s is not in the script's cache", v.name, inspection.ErrNotFound, ev.sub.cache.Resource, ev.key)}
		return
	case v.standby || !v.lead.Valid():
		req.reply <- replayResult{err: fmt.Errorf("replay %s: this runner is not the leader: it calls no handler", v.name)}
		return
	case !v.handles(ev.key):
		req.reply <- replayResult{err: fmt.Errorf("replay %s: %w: %s belongs to replica %s of the shard ring; replay it there", v.name, inspection.ErrInvalid, ev.key, v.shard.Owner(ev.key))}
		return
	}
	ev.obj, ev.old = obj, obj
	rec := &inspection.TraceRecord{Script: v.name, Version: v.hash, Resource: ev.sub.cache.Resource, Object: ev.key,
		Event: "replay", ResourceVersion: resourceVersionOf(obj)}
	if v.insp != nil && v.insp.trace != nil {
		rec = v.traceStart(ev)
	}
	v.callHandler(ev, kind, rec, req.dryRun)
	out := *rec
	v.traceDone(rec)
	req.reply <- replayResult{rec: out}
}

// Replay calls script's handler again with its cached resource object key (namespace/name)
// and returns what the call did; with dryRun its writes go with dryRun=All. It waits for the
// events queued before it.
func (e *Engine) Replay(ctx context.Context, script, resource, key string, dryRun bool) (inspection.TraceRecord, error) {
	if dryRun && e.trace == nil {
		return inspection.TraceRecord{}, fmt.Errorf("replay %s --dry-run: %w: needs trace recording, which is off (--trace-records 0)", script, inspection.ErrInvalid)
	}
	v, err := e.servingVersion(script)
	if err != nil {
		return inspection.TraceRecord{}, err
	}
	sub, err := e.subscriptionOf(v, resource)
	if err != nil {
		return inspection.TraceRecord{}, err
	}
	req := &replayRequest{dryRun: dryRun, reply: make(chan replayResult, 1)}
	if !v.queue.push(event{kind: eventReplay, sub: sub, key: key, replay: req}) {
		return inspection.TraceRecord{}, fmt.Errorf("replay %s: the version is stopping", script)
	}
	select {
	case res := <-req.reply:
		return res.rec, res.err
	case <-v.done:
		return inspection.TraceRecord{}, fmt.Errorf("replay %s: the version stopped before the call", script)
	case <-ctx.Done():
		return inspection.TraceRecord{}, fmt.Errorf("replay %s: %w", script, ctx.Err())
	}
}
