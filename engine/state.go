package engine

// versionState is where a version is in its life. Only the loader moves a version forward,
// except the last step, done, which the goroutine that joins a retired version takes.
//
//	syncing ──▶ current ──▶ draining ──▶ done
//	   └───────────────────────┘ (superseded or unloaded before it synced)
type versionState int32

const (
	// stateSyncing: registered on its informers, replaying the cache; the previous version,
	// if any, still serves.
	stateSyncing versionState = iota
	// stateCurrent: it serves the script.
	stateCurrent
	// stateDraining: retired; no new events reach it, its goroutines are finishing.
	stateDraining
	// stateDone: every goroutine it started has returned, and its predecessors are done.
	stateDone
)

func (s versionState) String() string {
	switch s {
	case stateSyncing:
		return "syncing"
	case stateCurrent:
		return "current"
	case stateDraining:
		return "draining"
	case stateDone:
		return "done"
	}
	return "unknown"
}

// setState moves v to s and tells the state API.
func (v *version) setState(s versionState) {
	v.state.Store(int32(s))
	switch {
	case v.book == nil:
	case s == stateDone:
		v.book.Done(v.name, v)
	default:
		v.book.Bump()
	}
}

func (v *version) currentState() versionState { return versionState(v.state.Load()) }
