package version

// State is where a version is in its life. Only the loader moves a version forward, except
// the last step, done, which the goroutine that joins a retired version takes.
//
//	syncing ──▶ current ──▶ draining ──▶ done
//	   └───────────────────────┘ (superseded or unloaded before it synced)
type State int32

const (
	// StateSyncing means it is registered on its informers, replaying the cache; the
	// previous version, if any, still serves.
	StateSyncing State = iota
	// StateCurrent means it serves the script.
	StateCurrent
	// StateDraining means it is retired: no new events reach it, its goroutines are finishing.
	StateDraining
	// StateDone means every goroutine it started has returned, and its predecessors are done.
	StateDone
)

func (s State) String() string {
	switch s {
	case StateSyncing:
		return "syncing"
	case StateCurrent:
		return "current"
	case StateDraining:
		return "draining"
	case StateDone:
		return "done"
	}
	return "unknown"
}
