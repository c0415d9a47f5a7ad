package engine

import (
	"sort"
	"time"

	"github.com/jsinformer/jsinformer/dynamicinformer"
)

// InformerView is one running informer as the debug API shows it.
type InformerView struct {
	Resource      string   `json:"resource"`
	Namespace     string   `json:"namespace,omitempty"` // empty: all namespaces or cluster-scoped
	LabelSelector string   `json:"labelSelector,omitempty"`
	FieldSelector string   `json:"fieldSelector,omitempty"`
	Scripts       []string `json:"scripts"`
	Synced        bool     `json:"synced"`
	Healthy       bool     `json:"healthy"`
	// SecondsSinceContact is -1 before the first contact.
	SecondsSinceContact float64   `json:"secondsSinceContact"`
	Objects             int       `json:"objects"`
	LastError           string    `json:"lastError,omitempty"`
	FailingSince        time.Time `json:"failingSince,omitzero"`
	Relists             uint64    `json:"relists"`
	WatchRestarts       uint64    `json:"watchRestarts"`
}

// Informers lists the running informers, sorted by resource then scope. Safe for concurrent
// use.
func (e *Engine) Informers() []InformerView {
	now := time.Now()
	hs := e.factory.Health()
	out := make([]InformerView, 0, len(hs))
	for _, h := range hs {
		since := -1.0
		if !h.LastContact.IsZero() {
			since = now.Sub(h.LastContact).Seconds()
		}
		out = append(out, InformerView{
			Resource: dynamicinformer.FormatGVR(h.Key.GVR), Namespace: h.Key.Namespace,
			LabelSelector: h.Key.LabelSelector, FieldSelector: h.Key.FieldSelector,
			Scripts: e.needs.scripts(h.Key), Synced: h.Synced, Healthy: h.Healthy,
			SecondsSinceContact: since, Objects: h.Objects, LastError: h.LastError,
			FailingSince: h.FailingSince, Relists: h.Relists, WatchRestarts: h.WatchRestarts,
		})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Resource != out[j].Resource {
			return out[i].Resource < out[j].Resource
		}
		return out[i].Namespace+out[i].LabelSelector < out[j].Namespace+out[j].LabelSelector
	})
	return out
}

// ScriptMemory is each script's runtimes' memory as the memory guard last measured it (it
// measures only while the heap is above half the memory limit; absent before). Safe for
// concurrent use.
func (e *Engine) ScriptMemory() map[string]int64 {
	out := map[string]int64{}
	e.memory.Range(func(k, v any) bool {
		out[k.(string)] = v.(int64)
		return true
	})
	return out
}
