package engine

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
