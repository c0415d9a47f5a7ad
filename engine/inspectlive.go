package engine

import (
	"sort"

	"github.com/jsinformer/jsinformer/engine/internal/inspect"
)

// The versions' side of the inspection API: a version implements inspect.Live. Live versions
// come from needs, which the loader keeps under its own mutex.

// live lists the live versions for the inspection API, sorted by script name, the serving one
// of a script first.
func (e *Engine) live() []inspect.Live {
	vs := e.needs.versions()
	out := make([]inspect.Live, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// versions lists the live versions (syncing, current, or draining not yet removed), sorted by
// script name, the serving one of a script first.
func (n *needs) versions() []*loaded {
	n.mu.Lock()
	out := make([]*loaded, 0, len(n.byVersion))
	for v := range n.byVersion {
		out = append(out, v)
	}
	n.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Script() != out[j].Script() {
			return out[i].Script() < out[j].Script()
		}
		return out[i].CurrentState() > out[j].CurrentState() // current before syncing
	})
	return out
}
