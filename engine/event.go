package engine

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/jsinformer/jsinformer/engine/internal/coalesce"
	"github.com/jsinformer/jsinformer/engine/internal/queue"

	"github.com/jsinformer/jsinformer/scripting"
)

type eventKind int

const (
	eventAdd eventKind = iota + 1
	eventUpdate
	eventDelete
	eventSynced   // marker: every initial-list add before it has been handled
	eventSchedule // a schedule entry is due
	eventCollect  // a scrape asks for the metric families with collect
	eventReplay   // the debug API's call of a handler again, run by an eventDo (replay.go)
	eventGained   // this replica gained keys of the shard ring: replay them (shard.go)
	eventDo       // a function to run on the worker: the inspection API's (inspect.Live.Do)
)

// event is one informer notification queued for a version's worker.
type event struct {
	kind    eventKind
	sub     *subscription
	key     string
	old     scripting.Object
	obj     scripting.Object // nil only for a tombstone whose final state is unknown
	rv      string           // obj's metadata.resourceVersion when the listener read it (resourceVersion)
	initial bool
	unknown bool
	values  [][]string      // index values by position, set by the indexer stage
	due     int             // eventSchedule: which schedule entry
	collect *collectRequest // eventCollect: the scrape waiting for it
	do      func()          // eventDo: what to run
	gained  *gainedKeys     // eventGained: the keys gained
}

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

// recreated reports whether an update joins two objects: the same key with another
// metadata.uid means the first was deleted and the second created while the watch was down,
// or between two lists. Scripts then see the delete (its final state unknown) and the add.
func recreated(old, obj scripting.Object) bool {
	oldUID, newUID := uidOf(old), uidOf(obj)
	return oldUID != "" && newUID != "" && oldUID != newUID
}

func uidOf(obj scripting.Object) string {
	meta, _ := obj["metadata"].(map[string]any)
	uid, _ := meta["uid"].(string)
	return uid
}

// unwrap returns the object's map and its client-go key ("namespace/name", or "name" for a
// cluster-scoped object), read straight from the map: this runs for every event, and
// cache.MetaNamespaceKeyFunc's generic accessors cost more than the rest of the hand-off.
func unwrap(obj any) (scripting.Object, string, bool) {
	u, key, _, ok := unwrapMeta(obj)
	return u, key, ok
}

// unwrapMeta is unwrap, and the object's metadata.resourceVersion: read here, while the
// metadata is in the CPU's cache, so that the worker's trace record (tracecall.go) need not
// fetch it from memory again for every object of a reload.
func unwrapMeta(obj any) (u scripting.Object, key, rv string, ok bool) {
	uns, ok := obj.(*unstructured.Unstructured)
	if !ok || uns == nil {
		return nil, "", "", false
	}
	meta, _ := uns.Object["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	rv, _ = meta["resourceVersion"].(string)
	if ns, _ := meta["namespace"].(string); ns != "" {
		return uns.Object, ns + "/" + name, rv, true
	}
	return uns.Object, name, rv, true
}

// resourceVersion is the event's object's metadata.resourceVersion: the listener's reading,
// or else the object's now.
func (ev *event) resourceVersion() string {
	if ev.rv != "" {
		return ev.rv
	}
	return resourceVersionOf(ev.obj)
}
