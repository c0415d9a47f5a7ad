package inspect

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jsinformer/jsinformer/inspection"
)

// The debug API's actions. Each acts on a script's serving version through Live and never
// touches its runtime: Retry goes through the reconcile workqueue, Pause and Resume through
// Pauses (the worker holds itself), Replay runs on the version's worker (Live.Do).

// Retry reconciles key of script now: its backoff is forgotten and it is queued at once. The
// key must be queued, waiting to retry, or the key of an object in the script's cache.
func (in *Inspector) Retry(script, key string) error {
	v, err := Serving(in.env.Live(), script)
	if err != nil {
		return err
	}
	book, res := v.Book(), v.Reconciled()
	if book == nil {
		return fmt.Errorf("retry %s: %w: the script has no reconcile", script, inspection.ErrInvalid)
	}
	if !book.Has(key) && v.Store().Get(res, key) == nil {
		var known []string
		for _, k := range book.Snapshot(time.Now()) {
			known = append(known, k.Key)
		}
		known = append(known, v.Store().Keys(res)...)
		slices.Sort(known)
		return fmt.Errorf("retry %s %s: %w: the key is neither queued nor in the script's cache%s", script, key, inspection.ErrNotFound, Suggest(key, slices.Compact(known)))
	}
	v.Requeue(key, "retry (debug API)")
	return nil
}

// Pause holds script's events and reconcile keys until Resume (Pauses); it reports false when
// the script was paused already.
func (in *Inspector) Pause(script string) (bool, error) {
	if err := in.loaded(script, "pause "+script); err != nil {
		return false, err
	}
	ok := in.env.Pauses.Pause(script)
	if ok {
		in.env.Logger.Warn("script paused through the debug API: its events wait until it is resumed", "script", script)
	}
	return ok, nil
}

// Resume lets a paused script go on; it reports false when the script was not paused.
func (in *Inspector) Resume(script string) (bool, error) {
	ok := in.env.Pauses.Resume(script)
	if !ok {
		if err := in.loaded(script, "resume "+script); err != nil {
			return false, err
		}
	}
	if ok {
		in.env.Logger.Info("script resumed through the debug API", "script", script)
	}
	return ok, nil
}

// Replay calls script's handler again with its cached resource object key and returns what
// the call did; with dryRun its writes go with dryRun=All. The call runs on the serving
// version's worker, after the events queued before it; Replay waits for it, for the version
// to stop, or for ctx.
func (in *Inspector) Replay(ctx context.Context, script, resource, key string, dryRun bool) (inspection.TraceRecord, error) {
	if dryRun && in.env.Trace == nil {
		return inspection.TraceRecord{}, fmt.Errorf("replay %s --dry-run: %w: needs trace recording, which is off (--trace-records 0)", script, inspection.ErrInvalid)
	}
	v, err := Serving(in.env.Live(), script)
	if err != nil {
		return inspection.TraceRecord{}, err
	}
	res, err := in.resolve(resource)
	if err != nil {
		return inspection.TraceRecord{}, err
	}
	w, err := WatchOf(v, res)
	if err != nil {
		return inspection.TraceRecord{}, err
	}
	type result struct {
		rec inspection.TraceRecord
		err error
	}
	reply := make(chan result, 1) // the worker never waits for the asker
	if !v.Do(func() {
		rec, err := v.Replay(w, key, dryRun)
		reply <- result{rec, err}
	}) {
		return inspection.TraceRecord{}, fmt.Errorf("replay %s: the version is stopping", script)
	}
	select {
	case r := <-reply:
		return r.rec, r.err
	case <-v.Done():
		return inspection.TraceRecord{}, fmt.Errorf("replay %s: the version stopped before the call", script)
	case <-ctx.Done():
		return inspection.TraceRecord{}, fmt.Errorf("replay %s: %w", script, ctx.Err())
	}
}
