package engine

import (
	ver "github.com/jsinformer/jsinformer/engine/internal/version"
)

// The types of a version that already live in package engine/internal/version, under the
// names the rest of this package still uses. Transitional (issue 20): they go once the
// version itself moves there; until then the package is imported as ver here, because this
// package's own type version would clash with its name.

type (
	event          = ver.Event
	eventKind      = ver.Kind
	subscription   = ver.Subscription
	target         = ver.Target
	gainedKeys     = ver.Gained
	versionState   = ver.State
	indexStage     = ver.IndexStage
	versionInspect = ver.Inspect
)

const (
	eventAdd      = ver.EventAdd
	eventUpdate   = ver.EventUpdate
	eventDelete   = ver.EventDelete
	eventSynced   = ver.EventSynced
	eventSchedule = ver.EventSchedule
	eventCollect  = ver.EventCollect
	eventReplay   = ver.EventReplay
	eventGained   = ver.EventGained
	eventDo       = ver.EventDo

	stateSyncing  = ver.StateSyncing
	stateCurrent  = ver.StateCurrent
	stateDraining = ver.StateDraining
	stateDone     = ver.StateDone
)

var (
	newEventQueue     = ver.NewQueue
	overload          = ver.Overload
	resourceVersionOf = ver.ResourceVersionOf
	newIndexStage     = ver.NewIndexStage
	logScriptFailure  = ver.LogFailure
	ownerKey          = ver.ControllerKey
	newInspect        = ver.NewInspect
	eventNames        = ver.EventNames
)
