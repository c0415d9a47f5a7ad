package fanout

import (
	"slices"
	"sync"

	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/engine/internal/queue"
	"github.com/jsinformer/jsinformer/scripting"
)

// Kind is what a notification says happened to its object.
type Kind uint8

// The kinds of notification.
const (
	Add Kind = iota + 1
	Update
	Delete
)

// Notification is one change handed to a subscriber.
type Notification struct {
	Kind    Kind
	Key     string           // client-go's key: "namespace/name", or "name"
	Old     scripting.Object // Update: the state before
	Obj     scripting.Object // nil only for a tombstone whose final state is unknown
	RV      string           // Obj's metadata.resourceVersion as read with its key
	Initial bool             // Add: part of the informer's initial list (isInInitialList)
	Unknown bool             // Delete: the object's final state is unknown
}

// Subscriber is one subscription to an informer: where its notifications go.
type Subscriber[T any] interface {
	// Informer is the informer subscribed to.
	Informer() cache.SharedIndexInformer
	// Intake is the queue the subscriber's items are pushed onto; the same every call.
	Intake() *queue.Queue[T]
	// Item is n as an item of that queue. It runs with the fanout's lock held, once per
	// notification per subscriber: it must not block.
	Item(n Notification) T
}

// Registry is the engine's fanouts, one per informer with a subscriber. The zero Registry is
// empty and ready to use.
type Registry[T any] struct {
	mu sync.Mutex
	by map[cache.SharedIndexInformer]*fanout[T]
}

// Member is a subscriber's place in a fanout, from Subscribe to Unsubscribe.
type Member[T any] struct {
	sub    Subscriber[T]
	intake *queue.Queue[T]
	fan    *fanout[T]
	synced <-chan struct{}
}

// Synced is closed once the member has been given the informer's whole initial list.
func (m *Member[T]) Synced() <-chan struct{} { return m.synced }

// fanout is the client-go handler of one informer for every subscriber joined to it.
type fanout[T any] struct {
	inf cache.SharedIndexInformer
	reg cache.ResourceEventHandlerRegistration // nil for Handler's, which client-go never sees

	mu   sync.Mutex
	objs map[string]delivered // every object handed out and not deleted since, by key
	subs []*Member[T]
}

// delivered is one object of a fanout's record, with the resourceVersion read with its key.
type delivered struct {
	obj scripting.Object
	rv  string
}

// Subscribe joins sub to the fanout of its informer, registering one if the informer has
// none, and queues the objects already handed out as initial adds onto sub's intake.
func (r *Registry[T]) Subscribe(sub Subscriber[T]) (*Member[T], error) {
	inf := sub.Informer()
	m := &Member[T]{sub: sub, intake: sub.Intake()}
	r.mu.Lock()
	defer r.mu.Unlock()
	if f := r.by[inf]; f != nil {
		f.join(m)
		return m, nil
	}
	f := &fanout[T]{inf: inf, objs: make(map[string]delivered, len(inf.GetStore().ListKeys())), subs: []*Member[T]{m}}
	reg, err := inf.AddEventHandler(f) // client-go replays its cache to f: m gets it as initial adds
	if err != nil {
		return nil, err
	}
	f.reg, m.fan, m.synced = reg, f, reg.HasSyncedChecker().Done()
	if r.by == nil {
		r.by = map[cache.SharedIndexInformer]*fanout[T]{}
	}
	r.by[inf] = f
	return m, nil
}

// Unsubscribe takes m off its fanout: once it returns, nothing more is queued for m. The
// last subscriber's leaving removes the fanout's registration, waiting until client-go
// delivers nothing more to it. A nil m, or one that has left, is left already.
func (r *Registry[T]) Unsubscribe(m *Member[T]) error {
	if m == nil || m.fan == nil {
		return nil
	}
	f := m.fan
	m.fan = nil
	r.mu.Lock()
	f.mu.Lock()
	f.subs = slices.DeleteFunc(f.subs, func(s *Member[T]) bool { return s == m })
	last := len(f.subs) == 0
	f.mu.Unlock()
	if last && r.by[f.inf] == f {
		delete(r.by, f.inf) // the next subscriber registers anew
	}
	r.mu.Unlock()
	if !last {
		return nil
	}
	return cache.ShutDownEventHandler(f.inf, f.reg)
}

// join adds m to a registered fanout, giving it every object handed out so far as an
// initial add. Called with the registry's lock held.
func (f *fanout[T]) join(m *Member[T]) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m.fan = f
	if f.reg.HasSynced() {
		// Every initial-list add has returned from OnAdd, so the record holds them all.
		m.synced = closedChan
	} else {
		// The rest of the initial list reaches m through OnAdd, marked initial.
		m.synced = f.reg.HasSyncedChecker().Done()
	}
	f.subs = append(f.subs, m)
	batch := make([]T, 0, min(len(f.objs), queue.ChunkSize))
	for key, d := range f.objs {
		batch = append(batch, m.sub.Item(Notification{Kind: Add, Key: key, Obj: d.obj, RV: d.rv, Initial: true}))
		if len(batch) == cap(batch) {
			m.intake.PushAll(batch)
			batch = batch[:0]
		}
	}
	m.intake.PushAll(batch)
}

// closedChan is a channel that is closed: a member synced from the start.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// Handler is a client-go handler queueing sub's items: a fanout with sub its only subscriber
// and no record, for tests that play client-go's part.
func Handler[T any](sub Subscriber[T]) cache.ResourceEventHandler {
	return &fanout[T]{subs: []*Member[T]{{sub: sub, intake: sub.Intake()}}}
}
