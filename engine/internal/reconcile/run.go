package reconcile

import (
	"errors"
	"time"

	"github.com/jsinformer/jsinformer/engine/internal/trace"
	"github.com/jsinformer/jsinformer/scripting"
)

// work is one worker: it takes keys until the queue is shut down and drained.
func (r *Workers[R]) work(s R, w *trace.Worker) {
	defer s.Close()
	for {
		key, quit := r.cfg.Queue.Get()
		if quit {
			return
		}
		if !r.dropping.Load() {
			r.process(s, w, key)
		}
		r.cfg.Queue.Done(key)
	}
}

func (r *Workers[R]) process(s R, w *trace.Worker, key string) {
	// Hold before Begin: a key held by a pause across a ring change is asked about after the
	// pause, or its old owner would run it on resume after its new owner replayed it.
	if !r.cfg.Hold() {
		return
	}
	end, ok := r.cfg.Begin(key)
	if !ok {
		return // a new leader or the key's new owner replays it
	}
	defer end()
	enqueue := func(k string) {
		w.Tap().AddEnqueued(k)
		r.Enqueue(k, "ctx.enqueue in reconcile of "+key)
	}
	ev := scripting.Event{Resource: r.cfg.Cache.Resource, Cache: r.cfg.Cache, Enqueue: enqueue, Metrics: r.cfg.Sink}
	rec := r.traceStart(w, key)
	r.book.Started(key)
	w.Tap().Open(rec, false)
	start := time.Now()
	res, err := s.Reconcile(key, ev)
	took := time.Since(start)
	w.Tap().Close()
	r.cfg.Metrics.Observe(took, err)
	attempt, gaveUp := 0, false
	if err != nil {
		attempt, gaveUp = r.retry(key, err)
	} else {
		r.cfg.Queue.Forget(key)
		if res.RequeueAfter > 0 {
			r.cfg.Queue.AddAfter(key, res.RequeueAfter)
		}
	}
	r.book.Finished(key, err, attempt, gaveUp, res.RequeueAfter)
	r.traceDone(w, rec, took, err)
}

// retry requeues key with backoff, or gives up after MaxRetries; it returns the attempt that
// failed and whether it gave up.
func (r *Workers[R]) retry(key string, err error) (int, bool) {
	attempt := r.cfg.Queue.NumRequeues(key) + 1
	attrs := []any{"handler", "reconcile", "object", key, "attempt", attempt, "error", err.Error()}
	var se *scripting.ScriptError
	if errors.As(err, &se) && se.Stack != "" {
		attrs = append(attrs, "stack", se.Stack)
	}
	if attempt > r.cfg.MaxRetries {
		r.cfg.Logger.Error("reconcile failed; giving up on key", attrs...)
		r.cfg.Queue.Forget(key)
		r.countDrop()
		return attempt, true
	}
	r.cfg.Logger.Warn("reconcile failed; will retry", attrs...)
	r.cfg.Queue.AddRateLimited(key)
	return attempt, false
}
