package version

import (
	"sync/atomic"
	"time"

	"github.com/jsinformer/jsinformer/engine/internal/inspect"
	"github.com/jsinformer/jsinformer/engine/internal/trace"
	"github.com/jsinformer/jsinformer/inspection"
)

// Inspect is what a version keeps for inspection: the recording side of its worker (package
// trace's Worker: the tap of its handler runtime, the call running, the record being built),
// the engine's pauses, and its subscriptions for readers off the loader. A nil Inspect (unit
// tests) records nothing, is never paused and has no subscriptions.
type Inspect struct {
	worker *trace.Worker
	pauses *inspect.Pauses
	subs   atomic.Pointer[[]*Subscription] // the version's once subscribed, for readers off the loader
	held   atomic.Int32                    // 1 while the worker holds an event for a pause
}

// NewInspect is the inspection side of a version whose worker records through worker.
func NewInspect(worker *trace.Worker, pauses *inspect.Pauses) *Inspect {
	return &Inspect{worker: worker, pauses: pauses}
}

// Recorder is the recording side of the version's worker; nil (recording nothing) for a nil
// Inspect.
func (in *Inspect) Recorder() *trace.Worker {
	if in == nil {
		return nil
	}
	return in.worker
}

// SetSubscriptions publishes the version's subscriptions once it has subscribed; the loader's.
func (in *Inspect) SetSubscriptions(subs []*Subscription) { in.subs.Store(&subs) }

// Subscriptions are the version's subscriptions once subscribed; nil before. Safe from any
// goroutine.
func (in *Inspect) Subscriptions() []*Subscription {
	if in == nil {
		return nil
	}
	if p := in.subs.Load(); p != nil {
		return *p
	}
	return nil
}

// Held is 1 while the worker holds an event for a pause, else 0: it counts in the backlog.
func (in *Inspect) Held() int {
	if in == nil {
		return 0
	}
	return int(in.held.Load())
}

// WaitUnpaused holds the worker while script is paused; false when abort closes meanwhile.
// The event it holds counts in the queue view's backlog (Held).
func (in *Inspect) WaitUnpaused(script string, abort <-chan struct{}) bool {
	if in == nil || !in.pauses.Paused(script) {
		return true
	}
	in.held.Store(1)
	defer in.held.Store(0)
	return in.pauses.Wait(script, abort)
}

// EventNames are the trace's names of the events it records, by kind.
var EventNames = [...]string{EventAdd: "add", EventUpdate: "update", EventDelete: "delete", EventSchedule: "schedule", EventReplay: "replay"}

// TraceStart begins the record of ev, handled by the version hash of script; nil when
// recording is off.
func (in *Inspect) TraceStart(script, hash string, ev Event) *inspection.TraceRecord {
	w := in.Recorder()
	if !w.Recording() {
		return nil
	}
	return w.Start(inspection.TraceRecord{
		Time: time.Now(), Script: script, Version: hash, Resource: ev.Sub.Cache.Resource, Object: ev.Key,
		Event: EventNames[ev.Kind], Initial: ev.Initial, FinalStateUnknown: ev.Unknown, ResourceVersion: ev.ResourceVersion(),
	})
}
