package version

import (
	"github.com/jsinformer/jsinformer/engine/internal/enginemetrics"
	"github.com/jsinformer/jsinformer/scripting"
)

// Kind is what an Event asks of the worker.
type Kind int

// The kinds of events: the three informer notifications, then markers and requests.
const (
	EventAdd Kind = iota + 1 // an informer add, or an initial-list or replayed add
	EventUpdate
	EventDelete
	EventSynced   // marker: every initial-list add before it has been handled
	EventSchedule // a schedule entry is due
	EventCollect  // a scrape asks for the metric families with collect
	EventReplay   // the debug API's call of a handler again, run by an EventDo
	EventGained   // this replica gained keys of the shard ring: replay them
	EventDo       // a function to run on the worker: the inspection API's (inspect.Live.Do)
	EventDeliver  // an outbox message (Key) is due: claim and deliver it (outbox.go)
)

// Event is one informer notification, or one marker or request, queued for a version's worker.
type Event struct {
	Kind    Kind
	Sub     *Subscription
	Key     string
	Old     scripting.Object
	Obj     scripting.Object // nil only for a tombstone whose final state is unknown
	RV      string           // Obj's metadata.resourceVersion when the listener read it (ResourceVersion)
	Initial bool
	Unknown bool
	Values  [][]string                    // index values by position, set by the index stage
	Due     int                           // EventSchedule: which schedule entry
	Collect *enginemetrics.CollectRequest // EventCollect: the scrape waiting for it
	Do      func()                        // EventDo: what to run
	Gained  *Gained                       // EventGained: the keys gained
}

// ResourceVersion is the event's object's metadata.resourceVersion: the listener's reading,
// or else the object's now.
func (ev *Event) ResourceVersion() string {
	if ev.RV != "" {
		return ev.RV
	}
	return ResourceVersionOf(ev.Obj)
}

// ResourceVersionOf is obj's metadata.resourceVersion; "" for nil or none.
func ResourceVersionOf(obj scripting.Object) string {
	meta, _ := obj["metadata"].(map[string]any)
	rv, _ := meta["resourceVersion"].(string)
	return rv
}

// Gained is an EventGained's: which keys were gained, and the version's subscriptions
// (the loader's, copied: the worker must not read the loader's list).
type Gained struct {
	Has func(string) bool
	// Named are gained reconcile keys that events named while another replica handled them.
	Named []string
	Subs  []*Subscription
}
