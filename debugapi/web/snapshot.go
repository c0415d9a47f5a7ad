package web

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/status"
)

// FailingPerScript bounds the failing objects a snapshot lists per audit script (errors,
// then failures, then warnings); AuditSummary.MoreFailing says how many more there are.
const FailingPerScript = inspection.AuditFailing

// KeysPerScript bounds the reconcile keys a snapshot lists per script version (running and
// failing ones first); KeyCount says how many there are.
const KeysPerScript = 100

// Snapshot is the /ui/events "snapshot" event's data: the engine's state API (package status, Engine.Status)
// with each script's queues, code frame, memory and call rates beside it.
type Snapshot struct {
	Time     time.Time           `json:"time"`
	Ready    bool                `json:"ready"`
	NotReady string              `json:"notReady,omitempty"`
	Leader   status.LeaderStatus `json:"leader"`
	// Shard is this replica's standing in the shard ring and, under --shard-cache, what it
	// caches (status.Status.Shard); nil without --sharded.
	Shard     *status.ShardStatus       `json:"shard,omitempty"`
	Scripts   []ScriptView              `json:"scripts"`
	Informers []InformerView            `json:"informers"`
	Indexes   []inspection.IndexSummary `json:"indexes"`
	// Permissions are what the runner lacks of what its scripts need, then the calls the API
	// server refused (status.Status.Permissions); empty when all is granted.
	Permissions []status.PermissionStatus `json:"permissions"`
	// Rates is false when the runner records no traces (no calls per second, no p95).
	Rates bool `json:"rates"`
	// Policies are the audit scripts' (admission.audit) counts, initial pass progress and
	// first failing objects (at most FailingPerScript each); ReportsMissing: the cluster does
	// not serve the report CRDs, so results are kept in memory only.
	Policies       []inspection.AuditSummary `json:"policies"`
	ReportsMissing bool                      `json:"reportsMissing,omitempty"`
}

// ScriptView is one script.
type ScriptView struct {
	status.ScriptStatus
	// Queues are its live versions' work, the serving version first.
	Queues   []inspection.ScriptQueue `json:"queues"`
	KeyCount int                      `json:"keyCount"`
	// Frame is the latest load's error with the source lines around it, when that load failed.
	Frame       *Frame `json:"frame,omitempty"`
	MemoryBytes int64  `json:"memoryBytes,omitempty"`
	Rates       Rates  `json:"rates"`
}

// InformerView is one informer, with the seconds since its last contact (-1: none yet)
// computed on the runner's clock.
type InformerView struct {
	status.InformerStatus
	SecondsSinceContact float64 `json:"secondsSinceContact"`
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
	st := src.Status()
	q, err := src.Queue("")
	if err != nil {
		return Snapshot{}, fmt.Errorf("read queues: %w", err)
	}
	queues := map[string][]inspection.ScriptQueue{}
	for _, sq := range q.Scripts {
		queues[sq.Script] = append(queues[sq.Script], sq)
	}
	memory := src.ScriptMemory()
	rates := p.rates.snapshot(now)
	out := Snapshot{Time: now, Ready: st.Ready, NotReady: st.NotReady, Leader: st.Leader, Shard: st.Shard,
		Scripts: make([]ScriptView, 0, len(st.Scripts)), Informers: make([]InformerView, 0, len(st.Informers)),
		Indexes: src.IndexSummaries(), Permissions: st.Permissions, Rates: p.recording.Load()}
	if out.Permissions == nil {
		out.Permissions = []status.PermissionStatus{}
	}
	out.Policies = src.AuditSummaries(FailingPerScript)
	if out.Policies == nil {
		out.Policies = []inspection.AuditSummary{}
	}
	out.ReportsMissing = st.Audit != nil && st.Audit.ReportsMissing
	for _, sc := range st.Scripts {
		v := ScriptView{ScriptStatus: sc, Queues: []inspection.ScriptQueue{}, Frame: p.frames.of(sc), MemoryBytes: memory[sc.Name], Rates: rates[sc.Name]}
		for _, sq := range queues[sc.Name] {
			v.KeyCount += len(sq.Keys)
			sq.Keys = topKeys(sq.Keys)
			v.Queues = append(v.Queues, sq)
		}
		out.Scripts = append(out.Scripts, v)
	}
	sort.Slice(out.Scripts, func(i, j int) bool { return out.Scripts[i].Name < out.Scripts[j].Name })
	for _, inf := range st.Informers {
		iv := InformerView{InformerStatus: inf, SecondsSinceContact: -1}
		if inf.LastContact != nil {
			iv.SecondsSinceContact = float64(now.Sub(*inf.LastContact).Milliseconds()) / 1000
		}
		out.Informers = append(out.Informers, iv)
	}
	return out, nil
}

// topKeys keeps the KeysPerScript keys that matter most: running, then failing (most
// attempts first), then the rest in the queue's order.
func topKeys(keys []inspection.KeyState) []inspection.KeyState {
	if len(keys) <= KeysPerScript {
		return keys
	}
	rank := func(k inspection.KeyState) int {
		switch {
		case k.Running:
			return 2
		case k.LastError != "":
			return 1
		}
		return 0
	}
	sorted := append([]inspection.KeyState(nil), keys...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if ri, rj := rank(sorted[i]), rank(sorted[j]); ri != rj {
			return ri > rj
		}
		return sorted[i].Attempts > sorted[j].Attempts
	})
	return sorted[:KeysPerScript]
}
