package version

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"

	"github.com/jsinformer/jsinformer/engine/internal/enginemetrics"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/status"
	"github.com/jsinformer/jsinformer/store"
)

// The outbox (docs/once.md): a version whose definition declares `outbox` delivers the
// messages of its script's outbox (package store's Outbox) on its worker, as it runs
// schedules there: deliver never runs beside another handler of the version. Its outbox loop
// (a running goroutine, from StartOutbox until the version is retired) lists the outbox when
// it starts, whenever the earliest pending message is due, and every OutboxPoll, and queues an
// EventDeliver for each message due that this replica owns (the key "outbox:<script>#<key>"
// on the shard ring; every key without sharding; none on a standby). A send on this replica
// queues its message at once (OutboxPoke). The worker claims the message (a compare-and-set:
// of two replicas exactly one claims it), calls deliver, and records the outcome.

// OutboxPoll is how often a serving version lists its outbox, to pick up what other replicas
// sent, retries due and deliveries interrupted on another replica.
const OutboxPoll = 10 * time.Second

// OutboxConfig is what a version with an outbox needs.
type OutboxConfig struct {
	Box      *store.Outbox
	Poke     *OutboxPoke
	Claimant string // this replica, in the records it claims
	Metrics  *enginemetrics.Outbox
	// Event records a Warning Event about the object a failed message names.
	Event func(ctx context.Context, about scripting.Object, reason, message string) error
	// Timeout bounds each store call of a delivery.
	Timeout time.Duration
}

// OutboxPoke tells the version serving a script of each message its ctx.outbox.send recorded
// on this replica; made before the version, which hooks itself in StartOutbox.
type OutboxPoke struct{ f atomic.Pointer[func(string)] }

// Sent queues key's delivery on the version hooked, if any. Safe from any goroutine.
func (p *OutboxPoke) Sent(key string) {
	if p == nil {
		return
	}
	if f := p.f.Load(); f != nil {
		(*f)(key)
	}
}

// outboxLoop is a version's outbox loop: one timer on the engine's clock, and the keys queued
// on the worker and not yet started (each queued once at most).
type outboxLoop struct {
	v     *Version
	cfg   OutboxConfig
	timer clock.Timer

	mu     sync.Mutex
	status *status.OutboxStatus // the last listing's, for the state API
	queued map[string]bool
	due    time.Time // when the timer fires
	wakeAt time.Time // the earliest retry a delivery asked for since the last listing
}

// StartOutbox starts v's outbox loop; called by the loader when v becomes current, as
// StartSchedules. The first listing is queued on the worker at once (an EventDeliver without
// a key), so the messages due at start-up, and those the initial adds sent before v served,
// are delivered before the worker goes idle.
func (v *Version) StartOutbox() {
	if v.outboxCfg == nil || v.def.Outbox == nil || v.standby {
		return
	}
	l := &outboxLoop{v: v, cfg: *v.outboxCfg, queued: map[string]bool{}}
	l.due = v.clock.Now().Add(OutboxPoll)
	l.timer = v.clock.NewTimer(OutboxPoll)
	v.outbox = l
	sent := l.sent
	l.cfg.Poke.f.Store(&sent)
	v.queue.Push(Event{Kind: EventDeliver})
	v.running.Go(func() { l.run(v.retired) })
}

func (l *outboxLoop) run(ctx context.Context) {
	defer l.timer.Stop()
	defer l.cfg.Poke.f.Store(nil)
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.timer.C():
			next := l.scan(ctx)
			l.mu.Lock()
			if !l.wakeAt.IsZero() && l.wakeAt.Before(next) {
				next = l.wakeAt
			}
			l.wakeAt = time.Time{}
			l.due = next
			// After queueing: a virtual clock counts the deliveries as queued once it is reset.
			l.timer.Reset(max(next.Sub(l.v.clock.Now()), time.Millisecond))
			l.mu.Unlock()
		}
	}
}

// scan lists the outbox, queues the deliveries due that this replica owns, and returns when
// to list again.
func (l *outboxLoop) scan(ctx context.Context) time.Time {
	now := l.v.clock.Now()
	poll := now.Add(OutboxPoll)
	if l.v.standby || !l.v.lead.Valid() {
		return poll
	}
	ctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	defer cancel()
	listing, err := l.cfg.Box.Due(ctx)
	if err != nil {
		l.v.logger.Warn("list outbox", "error", err)
		return poll
	}
	l.cfg.Metrics.Listed(l.v.name, listing.Counts)
	l.setStatus(listing)
	for _, key := range listing.Due {
		l.sent(key)
	}
	if !listing.Next.IsZero() && listing.Next.Before(poll) {
		return listing.Next
	}
	return poll
}

// sent queues key's delivery on the worker, unless it is queued already or another replica
// owns it. Safe from any goroutine.
func (l *outboxLoop) sent(key string) {
	if !l.v.shard.Handles(l.v.outboxKey(key)) {
		return
	}
	l.mu.Lock()
	if l.queued[key] {
		l.mu.Unlock()
		return
	}
	l.queued[key] = true
	l.mu.Unlock()
	if !l.v.queue.Push(Event{Kind: EventDeliver, Key: key}) {
		l.started(key)
	}
}

// started notes that key's queued delivery has started: a later listing may queue it again.
func (l *outboxLoop) started(key string) {
	l.mu.Lock()
	delete(l.queued, key)
	l.mu.Unlock()
}

// wakeBy makes the loop list the outbox at t at the latest (a retry due then). Safe from any
// goroutine.
func (l *outboxLoop) wakeBy(t time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wakeAt.IsZero() || t.Before(l.wakeAt) {
		l.wakeAt = t
	}
	if t.Before(l.due) {
		l.due = t
		l.timer.Reset(max(t.Sub(l.v.clock.Now()), time.Millisecond))
	}
}

// outboxKey is the key that decides which replica delivers the outbox message key.
func (v *Version) outboxKey(key string) string { return "outbox:" + v.name + "#" + key }

// callDeliver runs on the worker: it claims key's message, calls outbox.deliver and records
// the outcome.
func (v *Version) callDeliver(key string) {
	l := v.outbox
	if v.retired.Err() != nil {
		return
	}
	if key == "" { // StartOutbox's first listing
		l.wakeBy(l.scan(v.retired))
		return
	}
	l.started(key)
	end, ok := v.begin(v.outboxKey(key))
	if !ok {
		return // another replica delivers it, or this one calls nothing
	}
	defer end()
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.Timeout)
	defer cancel()
	c, err := l.cfg.Box.Claim(ctx, key, l.cfg.Claimant)
	if err != nil {
		v.logger.Warn("claim outbox message", "key", key, "error", err)
		l.wakeBy(v.clock.Now().Add(time.Second))
		return
	}
	if c == nil {
		return // not due, or another replica claimed it first
	}
	if c.Interrupted {
		l.cfg.Metrics.Delivered(v.name, enginemetrics.OutboxInterrupted)
		v.logger.Warn("outbox message: its last delivery was interrupted, its outcome is unknown", "key", key, "attempt", c.Attempts)
	}
	if c.Abandoned {
		v.outboxGivenUp(ctx, c)
		return
	}
	v.deliver(ctx, c)
}

// deliver calls outbox.deliver for c and records the outcome.
func (v *Version) deliver(ctx context.Context, c *store.Claim) {
	l := v.outbox
	policy := l.cfg.Box.Policy()
	ev := scripting.Event{Enqueue: v.enqueue, Metrics: v.metricSink()}
	if first := v.scheduleCache; first != nil {
		ev.Resource, ev.Cache = first.Resource, first
	}
	const handler = "outbox.deliver"
	rec, resource, object := v.deliveryRecord(c)
	start := v.recorder().Call(handler, resource, object, rec, false)
	err := v.script.Deliver(c.Message, scripting.Delivery{Key: c.Key, Attempt: c.Attempts, Attempts: policy.Attempts, Interrupted: c.Interrupted}, ev)
	took := time.Since(start)
	v.recorder().Ended(handler, rec, took, err)
	v.metrics[EventDeliver].Observe(took, err)
	if rec != nil {
		rec.Attempt = c.Attempts
	}
	v.traceDone(rec)
	if err == nil {
		if err := l.cfg.Box.Done(ctx, c); err != nil {
			l.cfg.Metrics.Delivered(v.name, enginemetrics.OutboxUnrecorded)
			v.logger.Error("outbox message delivered, but its record could not be written: it may be delivered again", "key", c.Key, "error", err)
			return
		}
		l.cfg.Metrics.Delivered(v.name, enginemetrics.OutboxDelivered)
		v.logger.Info("outbox message delivered", "key", c.Key, "attempt", c.Attempts)
		return
	}
	v.logFailure("outbox.deliver", "", c.Key, err)
	// A delivery cut short may have taken effect: at most once, it is not repeated.
	unknown := errors.Is(err, scripting.ErrTimeout) || errors.Is(err, scripting.ErrInterrupted) || errors.Is(err, scripting.ErrStuck)
	final, next, ferr := l.cfg.Box.Fail(ctx, c, err.Error(), unknown && !policy.Redeliver)
	if ferr != nil {
		v.logger.Error("record outbox failure", "key", c.Key, "error", ferr)
		return
	}
	c.LastError = err.Error()
	if final {
		v.outboxGivenUp(ctx, c)
		return
	}
	l.cfg.Metrics.Delivered(v.name, enginemetrics.OutboxRetry)
	l.wakeBy(next)
}

// outboxGivenUp reports c's message as failed for good: a metric, an ERROR and, when the
// message names an object, a Warning Event on it.
func (v *Version) outboxGivenUp(ctx context.Context, c *store.Claim) {
	l := v.outbox
	l.cfg.Metrics.Delivered(v.name, enginemetrics.OutboxFailed)
	l.wakeBy(v.clock.Now()) // list again: the state API shows the failure
	v.logger.Error("outbox message failed for good", "key", c.Key, "attempts", c.Attempts, "error", c.LastError)
	if c.About == nil || l.cfg.Event == nil {
		return
	}
	about := scripting.Object{"apiVersion": c.About.APIVersion, "kind": c.About.Kind, "metadata": map[string]any{
		"namespace": c.About.Namespace, "name": c.About.Name, "uid": c.About.UID}}
	msg := fmt.Sprintf("%s: outbox message %q failed after %d attempts: %s", v.name, c.Key, c.Attempts, c.LastError)
	if err := l.cfg.Event(ctx, about, "OutboxDeliveryFailed", msg); err != nil {
		v.logger.Warn("record outbox failure event", "key", c.Key, "error", err)
	}
}

// setStatus keeps what listing says for the state API.
func (l *outboxLoop) setStatus(listing store.OutboxListing) {
	st := &status.OutboxStatus{Pending: listing.Counts[store.OutboxPending], Claimed: listing.Counts[store.OutboxClaimed],
		Done: listing.Counts[store.OutboxDone], Failed: listing.Counts[store.OutboxFailed], Listed: l.v.clock.Now()}
	for _, e := range listing.Failed {
		st.Failures = append(st.Failures, status.OutboxFailure{Key: e.Key, Attempts: e.Attempts, Error: e.LastError,
			Time: time.UnixMilli(e.Finished)})
	}
	l.mu.Lock()
	l.status = st
	l.mu.Unlock()
}

// outboxStatus is v's outbox as last listed; nil without an outbox or before a listing.
func (v *Version) outboxStatus() *status.OutboxStatus {
	l := v.outbox
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.status
}

// deliveryRecord begins the trace record of c's delivery, filed under the object the message
// is about when it is of a resource v watches (so `runner explain` of that object shows each
// attempt, its requests and error); nil when recording is off or the message is about
// nothing v watches. resource and object name the call in flight either way.
func (v *Version) deliveryRecord(c *store.Claim) (rec *inspection.TraceRecord, resource, object string) {
	resource, object = "outbox", c.Key
	a := c.About
	if a == nil {
		return nil, resource, object
	}
	for _, t := range v.targets {
		gvr := t.Resource.GVR
		apiVersion := gvr.Version
		if gvr.Group != "" {
			apiVersion = gvr.Group + "/" + gvr.Version
		}
		if t.Resource.Kind != a.Kind || apiVersion != a.APIVersion {
			continue
		}
		resource, object = t.Resource.String(), a.Name
		if a.Namespace != "" {
			object = a.Namespace + "/" + a.Name
		}
		rec = v.recorder().Start(inspection.TraceRecord{Time: time.Now(), Script: v.name, Version: v.hash,
			Resource: resource, Object: object, Event: "deliver"})
		return rec, resource, object
	}
	return nil, resource, object
}
