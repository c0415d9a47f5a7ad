package engine

import (
	"fmt"
	"slices"
	"time"

	"github.com/jsinformer/jsinformer/engine/internal/inspect"
	"github.com/jsinformer/jsinformer/inspection"
)

// Actions of the debug API. Each acts on a script's serving version and is safe for
// concurrent use.

// Retry reconciles key of script now: its backoff is forgotten and it is queued at once. The
// key must be queued, waiting to retry, or the key of an object in the script's cache.
func (e *Engine) Retry(script, key string) error {
	v, err := e.servingVersion(script)
	if err != nil {
		return err
	}
	r := v.reconciler
	if r == nil {
		return fmt.Errorf("retry %s: %w: the script has no reconcile", script, inspection.ErrInvalid)
	}
	if !r.insp.book.Has(key) && v.store.Get(r.cache.Resource, key) == nil {
		var known []string
		for _, k := range r.insp.book.Snapshot(time.Now()) {
			known = append(known, k.Key)
		}
		known = append(known, v.store.Keys(r.cache.Resource)...)
		slices.Sort(known)
		return fmt.Errorf("retry %s %s: %w: the key is neither queued nor in the script's cache%s", script, key, inspection.ErrNotFound, inspect.Suggest(key, slices.Compact(known)))
	}
	r.queue.Forget(key)
	r.enqueue(key, "retry (debug API)")
	return nil
}

// Pause holds script's events and reconcile keys until Resume (inspect.Pauses); it reports false
// when the script was paused already.
func (e *Engine) Pause(script string) (bool, error) {
	if !slices.Contains(e.scriptNames(), script) {
		return false, fmt.Errorf("pause %s: %w: no such script is loaded%s", script, inspection.ErrNotFound, inspect.Suggest(script, e.scriptNames()))
	}
	ok := e.pauses.Pause(script)
	if ok {
		e.logger.Warn("script paused through the debug API: its events wait until it is resumed", "script", script)
	}
	return ok, nil
}

// Resume lets a paused script go on; it reports false when the script was not paused.
func (e *Engine) Resume(script string) (bool, error) {
	ok := e.pauses.Resume(script)
	if !ok && !slices.Contains(e.scriptNames(), script) {
		return false, fmt.Errorf("resume %s: %w: no such script is loaded%s", script, inspection.ErrNotFound, inspect.Suggest(script, e.scriptNames()))
	}
	if ok {
		e.logger.Info("script resumed through the debug API", "script", script)
	}
	return ok, nil
}
