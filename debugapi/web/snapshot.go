package web

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/jsinformer/jsinformer/engine"
)

// KeysPerScript bounds the reconcile keys a snapshot lists per script (the ones with an error
// or running first); KeyCount says how many there are.
const KeysPerScript = 100

// Snapshot is the /ui/events "snapshot" event's data.
type Snapshot struct {
	Time      time.Time             `json:"time"`
	Scripts   []ScriptView          `json:"scripts"`
	Informers []engine.InformerView `json:"informers"`
	Indexes   []engine.IndexSummary `json:"indexes"`
	// Rates is false when the runner records no traces (no calls per second, no p95).
	Rates bool `json:"rates"`
}

// ScriptView is one script: its live versions' work, last loads, memory and call rates.
type ScriptView struct {
	Name string `json:"name"`
	// Versions are the live versions (current, syncing, draining), the serving one first.
	Versions    []engine.ScriptQueue  `json:"versions"`
	KeyCount    int                   `json:"keyCount"`
	Reloads     []engine.ReloadRecord `json:"reloads"`
	MemoryBytes int64                 `json:"memoryBytes,omitempty"`
	Rates       Rates                 `json:"rates"`
}

func (p *Page) snapshotJSON() ([]byte, error) {
	s, err := p.snapshot(time.Now())
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode snapshot: %w", err)
	}
	return data, nil
}

func (p *Page) snapshot(now time.Time) (Snapshot, error) {
	src := p.opts.Source
	q, err := src.Queue("")
	if err != nil {
		return Snapshot{}, fmt.Errorf("read queues: %w", err)
	}
	reloads := src.Reloads()
	memory := src.ScriptMemory()
	rates := p.rates.snapshot(now)
	byName := map[string]*ScriptView{}
	view := func(name string) *ScriptView {
		if v := byName[name]; v != nil {
			return v
		}
		v := &ScriptView{Name: name, Versions: []engine.ScriptQueue{}, Reloads: reloads[name], MemoryBytes: memory[name], Rates: rates[name]}
		byName[name] = v
		return v
	}
	for _, sq := range q.Scripts {
		v := view(sq.Script)
		v.KeyCount += len(sq.Keys)
		sq.Keys = topKeys(sq.Keys)
		v.Versions = append(v.Versions, sq)
	}
	for name := range reloads { // scripts that failed to load have no live version
		view(name)
	}
	out := Snapshot{Time: now, Scripts: make([]ScriptView, 0, len(byName)), Informers: src.Informers(), Indexes: src.IndexSummaries(), Rates: p.recording.Load()}
	for _, v := range byName {
		out.Scripts = append(out.Scripts, *v)
	}
	sort.Slice(out.Scripts, func(i, j int) bool { return out.Scripts[i].Name < out.Scripts[j].Name })
	return out, nil
}

// topKeys keeps the KeysPerScript keys that matter most: running, then failing (most
// attempts first), then the rest in the queue's order.
func topKeys(keys []engine.KeyState) []engine.KeyState {
	if len(keys) <= KeysPerScript {
		return keys
	}
	rank := func(k engine.KeyState) int {
		switch {
		case k.Running:
			return 2
		case k.LastError != "":
			return 1
		}
		return 0
	}
	sorted := append([]engine.KeyState(nil), keys...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if ri, rj := rank(sorted[i]), rank(sorted[j]); ri != rj {
			return ri > rj
		}
		return sorted[i].Attempts > sorted[j].Attempts
	})
	return sorted[:KeysPerScript]
}
