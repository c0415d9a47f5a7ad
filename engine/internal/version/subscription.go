package version

import (
	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine/internal/fanout"
	"github.com/jsinformer/jsinformer/engine/internal/queue"
	"github.com/jsinformer/jsinformer/internal/scriptcache"
	"github.com/jsinformer/jsinformer/scripting"
)

// Target is one resolved watch of a version.
type Target struct {
	Resource dynamicinformer.Resource
	Key      dynamicinformer.Key
	Watch    int                   // position in the definition's watch list
	Enqueue  scripting.EnqueueMode // what its events enqueue for reconcile
}

// Informer is one user's reference on a shared informer (the engine's InformerHandle).
type Informer interface {
	Informer() cache.SharedIndexInformer
	Release()
}

// Subscription is one watched resource of a version: its informer handle and its place in
// the fanout of that informer (package engine/internal/fanout).
type Subscription struct {
	Key    dynamicinformer.Key
	Target Target
	Handle Informer
	Cache  *scriptcache.View
	Queue  *queue.Queue[Event]   // the version's intake: its fanout queues its events here
	Fan    *fanout.Member[Event] // its place in the fanout of its informer
	Synced <-chan struct{}       // closed once it has been given the informer's initial list
}

var _ fanout.Subscriber[Event] = (*Subscription)(nil)

// Informer is the informer sub watches.
func (sub *Subscription) Informer() cache.SharedIndexInformer { return sub.Handle.Informer() }

// Intake is the version's queue sub's events go to.
func (sub *Subscription) Intake() *queue.Queue[Event] { return sub.Queue }

// Item is the fanout's notification n as an event of sub; on client-go's listener goroutine,
// for every notification.
func (sub *Subscription) Item(n fanout.Notification) Event {
	return Event{Kind: noteKinds[n.Kind], Sub: sub, Key: n.Key, Old: n.Old, Obj: n.Obj, RV: n.RV, Initial: n.Initial, Unknown: n.Unknown}
}

var noteKinds = [...]Kind{fanout.Add: EventAdd, fanout.Update: EventUpdate, fanout.Delete: EventDelete}
