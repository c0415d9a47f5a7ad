package version

import (
	"github.com/jsinformer/jsinformer/engine/internal/coalesce"
	"github.com/jsinformer/jsinformer/engine/internal/queue"
)

// How events come in. Each watched resource of a version is a Subscription to the fanout of
// its informer (package engine/internal/fanout: one client-go registration per informer,
// shared by the versions); the fanout turns each notification into an Event of that
// subscription (Item) and pushes it onto the version's intake queue (package
// engine/internal/queue), whose overload policy (package engine/internal/coalesce) folds
// updates past the engine's MaxBacklog.

// chunks is the chunk pool of every version's event queues (NewQueue).
var chunks queue.Pool[Event]

// NewQueue is a version's event queue: its chunks come from and go back to one pool shared
// by every version.
func NewQueue() *queue.Queue[Event] { return queue.NewPooled(&chunks) }

// ObjectRef is what coalescing matches events on: one object of one watched resource.
type ObjectRef struct {
	sub *Subscription
	key string
}

// items is what the overload policy needs of events: updates are folded into the last
// queued update of the same object, keeping its old state (the one the handler will have
// seen).
type items struct{}

// Overload is the overload policy's view of events, one for every queue.
var Overload coalesce.Items[Event, ObjectRef] = items{}

// Object is the object an event is about; markers (sync, schedule) are about none.
func (items) Object(ev Event) (ObjectRef, bool) {
	if ev.Sub == nil {
		return ObjectRef{}, false
	}
	return ObjectRef{sub: ev.Sub, key: ev.Key}, true
}

func (items) Update(ev Event) bool { return ev.Kind == EventUpdate }

func (items) Fold(into *Event, ev Event) { into.Obj, into.Values = ev.Obj, ev.Values }
