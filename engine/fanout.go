package engine

import (
	"slices"
	"sync"

	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine/internal/queue"
	"github.com/jsinformer/jsinformer/scripting"
)

// One client-go registration per shared informer, fanned out to the versions watching it.
//
// A version used to register a handler of its own on each informer it watches, and client-go
// then replayed the whole cache to that registration through its listener: two goroutines and
// two channel hops per object, a utiltrace per notification while more than 1,024 were
// pending, and the new version's index stage waiting on it (13 % of a reload's CPU, and most of
// its first 100 ms). Now the engine registers once per informer. The fanout hands every
// notification to each subscribed version's queue and remembers what it has handed out (key →
// object, the objects client-go's own cache holds), so a version that subscribes later is
// given those objects as initial adds from that record in one burst, under the lock the
// notifications take: every notification is either in the record it was given or reaches it
// afterwards, none both, and per key its events keep the server's order.
//
// Locks: fanouts.mu (subscribe, unsubscribe; the loader's) before fanout.mu (every
// notification, on client-go's listener goroutine). Neither is held while waiting on client-go.

// fanouts is the engine's registry of fanouts, one per informer with a subscriber.
type fanouts struct {
	mu sync.Mutex
	by map[cache.SharedIndexInformer]*fanout
}

// fanout is the client-go handler of one informer for every version subscribed to it.
type fanout struct {
	inf cache.SharedIndexInformer
	reg cache.ResourceEventHandlerRegistration // nil for handlerFor's, which client-go never sees

	mu   sync.Mutex
	objs map[string]delivered // every object handed out and not deleted since, by key
	subs []*subscription
}

// delivered is one object of a fanout's record, with the resourceVersion read with its key.
type delivered struct {
	obj scripting.Object
	rv  string
}

// subscribe joins sub to the fanout of sub.informer, registering one if the informer has
// none, and queues the objects already handed out as initial adds onto sub.intake. It sets
// sub.synced: closed once sub has been given the informer's whole initial list.
func (fs *fanouts) subscribe(sub *subscription) error {
	inf := sub.informer.Informer()
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f := fs.by[inf]; f != nil {
		f.join(sub)
		return nil
	}
	f := &fanout{inf: inf, objs: make(map[string]delivered, len(inf.GetStore().ListKeys())), subs: []*subscription{sub}}
	reg, err := inf.AddEventHandler(f) // client-go replays its cache to f: sub gets it as initial adds
	if err != nil {
		return err
	}
	f.reg, sub.fan, sub.synced = reg, f, reg.HasSyncedChecker().Done()
	if fs.by == nil {
		fs.by = map[cache.SharedIndexInformer]*fanout{}
	}
	fs.by[inf] = f
	return nil
}

// unsubscribe takes sub off its fanout: once it returns, nothing more is queued for sub. The
// last subscriber's leaving removes the fanout's registration, waiting until client-go
// delivers nothing more to it.
func (fs *fanouts) unsubscribe(sub *subscription) error {
	f := sub.fan
	if f == nil {
		return nil
	}
	sub.fan = nil
	fs.mu.Lock()
	f.mu.Lock()
	f.subs = slices.DeleteFunc(f.subs, func(s *subscription) bool { return s == sub })
	last := len(f.subs) == 0
	f.mu.Unlock()
	if last && fs.by[f.inf] == f {
		delete(fs.by, f.inf) // the next subscriber registers anew
	}
	fs.mu.Unlock()
	if !last {
		return nil
	}
	return cache.ShutDownEventHandler(f.inf, f.reg)
}

// join adds sub to a registered fanout, giving it every object handed out so far as an
// initial add. Called with the registry's lock held.
func (f *fanout) join(sub *subscription) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sub.fan = f
	if f.reg.HasSynced() {
		// Every initial-list add has returned from OnAdd, so the record holds them all.
		sub.synced = closedChan
	} else {
		// The rest of the initial list reaches sub through OnAdd, marked initial.
		sub.synced = f.reg.HasSyncedChecker().Done()
	}
	f.subs = append(f.subs, sub)
	batch := make([]event, 0, min(len(f.objs), queue.ChunkSize))
	for key, d := range f.objs {
		batch = append(batch, event{kind: eventAdd, sub: sub, key: key, obj: d.obj, rv: d.rv, initial: true})
		if len(batch) == cap(batch) {
			sub.intake.PushAll(batch)
			batch = batch[:0]
		}
	}
	sub.intake.PushAll(batch)
}

// closedChan is a channel that is closed: a subscription synced from the start.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// remember records key's state as last handed out; f.mu held. Without a record (a fanout
// built for tests) it does nothing.
func (f *fanout) remember(key string, u scripting.Object, rv string) {
	if f.objs != nil {
		f.objs[key] = delivered{obj: u, rv: rv}
	}
}

// OnAdd records obj and queues its add for every subscriber.
func (f *fanout) OnAdd(obj any, initial bool) {
	u, key, rv, ok := unwrapMeta(obj)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.remember(key, u, rv)
	for _, sub := range f.subs {
		sub.intake.Push(event{kind: eventAdd, sub: sub, key: key, obj: u, rv: rv, initial: initial})
	}
}

// OnUpdate records the new state and queues the update, or a delete and an add when the key
// now names another object (recreated).
func (f *fanout) OnUpdate(oldObj, newObj any) {
	o, _, _ := unwrap(oldObj)
	u, key, rv, ok := unwrapMeta(newObj)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.remember(key, u, rv)
	again := recreated(o, u)
	for _, sub := range f.subs {
		if again {
			sub.intake.PushAll([]event{
				{kind: eventDelete, sub: sub, key: key, obj: o, unknown: true},
				{kind: eventAdd, sub: sub, key: key, obj: u, rv: rv},
			})
			continue
		}
		sub.intake.Push(event{kind: eventUpdate, sub: sub, key: key, old: o, obj: u, rv: rv})
	}
}

// OnDelete forgets the object and queues its delete; a tombstone's final state is unknown.
func (f *fanout) OnDelete(obj any) {
	var (
		u       scripting.Object
		key     string
		unknown bool
	)
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		u, _, _ = unwrap(tomb.Obj)
		key, unknown = tomb.Key, true
	} else {
		if u, key, ok = unwrap(obj); !ok {
			return
		}
		unknown = dynamicinformer.FinalStateUnknown(obj)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.objs != nil {
		delete(f.objs, key)
	}
	for _, sub := range f.subs {
		sub.intake.Push(event{kind: eventDelete, sub: sub, key: key, obj: u, unknown: unknown})
	}
}

// handlerFor is a client-go handler queueing sub's events onto q: a fanout with sub its only
// subscriber and no record, for tests that play client-go's part.
func handlerFor(sub *subscription, q *queue.Queue[event]) cache.ResourceEventHandler {
	sub.intake = q
	return &fanout{subs: []*subscription{sub}}
}
