package engine

import (
	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/engine/internal/coalesce"
	"github.com/jsinformer/jsinformer/engine/internal/fanout"
	"github.com/jsinformer/jsinformer/engine/internal/queue"
)

// How events come in. Each watched resource of a version is a subscription to the fanout of
// its informer (package engine/internal/fanout: one client-go registration per informer,
// shared by the versions); the fanout turns each notification into an event of that
// subscription (Item) and pushes it onto the version's intake queue (package
// engine/internal/queue), whose overload policy (package engine/internal/coalesce) folds
// updates past Config.MaxBacklog.

var _ fanout.Subscriber[event] = (*subscription)(nil)

// Informer is the informer sub watches.
func (sub *subscription) Informer() cache.SharedIndexInformer { return sub.informer.Informer() }

// Intake is the version's queue sub's events go to.
func (sub *subscription) Intake() *queue.Queue[event] { return sub.intake }

// Item is the fanout's notification n as an event of sub; on client-go's listener goroutine,
// for every notification.
func (sub *subscription) Item(n fanout.Notification) event {
	return event{kind: noteKinds[n.Kind], sub: sub, key: n.Key, old: n.Old, obj: n.Obj, rv: n.RV, initial: n.Initial, unknown: n.Unknown}
}

var noteKinds = [...]eventKind{fanout.Add: eventAdd, fanout.Update: eventUpdate, fanout.Delete: eventDelete}

// eventChunks is the chunk pool of every version's event queues (newEventQueue).
var eventChunks queue.Pool[event]

// newEventQueue is a version's event queue: its chunks come from and go back to eventChunks.
func newEventQueue() *queue.Queue[event] { return queue.NewPooled(&eventChunks) }

// objectRef is what coalescing matches events on: one object of one watched resource.
type objectRef struct {
	sub *subscription
	key string
}

// eventItems is what the overload policy (package engine/internal/coalesce, past
// Config.MaxBacklog) needs of events: updates are folded into the last queued update of the
// same object, keeping its old state (the one the handler will have seen).
type eventItems struct{}

// overload is the policy's view of events, one for every queue.
var overload coalesce.Items[event, objectRef] = eventItems{}

// Object is the object an event is about; markers (sync, schedule) are about none.
func (eventItems) Object(ev event) (objectRef, bool) {
	if ev.sub == nil {
		return objectRef{}, false
	}
	return objectRef{sub: ev.sub, key: ev.key}, true
}

func (eventItems) Update(ev event) bool { return ev.kind == eventUpdate }

func (eventItems) Fold(into *event, ev event) { into.obj, into.values = ev.obj, ev.values }
