package engine

import (
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

// resourceVersion is the event's object's metadata.resourceVersion: the listener's reading,
// or else the object's now.
func (ev *event) resourceVersion() string {
	if ev.rv != "" {
		return ev.rv
	}
	return resourceVersionOf(ev.obj)
}
