package engine

import (
	"errors"
	"slices"
	"strings"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/status"
)

// The engine's state API: what tests assert on and what the debug views serve. Status is a
// snapshot, safe to take from any goroutine; its JSON form is the debug API's.

func errorStatus(err error) *status.ErrorStatus {
	if err == nil {
		return nil
	}
	out := &status.ErrorStatus{Message: err.Error()}
	var se *scripting.ScriptError
	if errors.As(err, &se) {
		out.File, out.Line, out.Column = se.File, se.Line, se.Column
	}
	return out
}

// watchesOf are keys as the state API shows them.
func watchesOf(keys []dynamicinformer.Key) []status.WatchStatus {
	out := make([]status.WatchStatus, len(keys))
	for i, k := range keys {
		out[i] = watchOf(k)
	}
	return out
}

func watchOf(k dynamicinformer.Key) status.WatchStatus {
	return status.WatchStatus{Resource: dynamicinformer.FormatGVR(k.GVR), Namespace: k.Namespace,
		LabelSelector: k.LabelSelector, FieldSelector: k.FieldSelector}
}

// informerShard is a partitioned informer's filtering for status; nil for one not partitioned.
func informerShard(k dynamicinformer.Key, s dynamicinformer.ShardStatus) *status.InformerShard {
	if k.Partition.IsZero() {
		return nil
	}
	mode := string(s.Mode)
	if s.Mode == dynamicinformer.ShardOff {
		mode = "off"
	}
	return &status.InformerShard{Partition: k.Partition.String(), Selector: k.Partition.Selector(), Mode: mode,
		Reason: s.Reason, Received: s.Received, Kept: s.Kept}
}

// shardCacheStatus adds to sh (nil without --sharded) what this replica caches under
// --shard-cache: its informers' distinct partitions and each partitioned script's objects.
func (e *Engine) shardCacheStatus(sh *status.ShardStatus, infs []status.InformerStatus) {
	if sh == nil || !e.cfg.ShardCache {
		return
	}
	for _, i := range infs {
		if i.Shard != nil && !slices.Contains(sh.Partitions, i.Shard.Partition) {
			sh.Partitions = append(sh.Partitions, i.Shard.Partition)
		}
	}
	slices.Sort(sh.Partitions)
	sh.Cached = e.shardCached()
}

// Status returns a snapshot of the engine's state. Safe for concurrent use.
func (e *Engine) Status() status.Status {
	st := status.Status{Ready: true, Leader: e.leaderStatus(), Shard: e.shardStatus()}
	if err := e.Ready(); err != nil {
		st.Ready, st.NotReady = false, err.Error()
	}
	st.Seq, st.Scripts = e.book.Scripts(e.stats.counts.Snapshot)
	st.Informers = e.informerStatus()
	e.shardCacheStatus(st.Shard, st.Informers)
	st.Permissions = e.permissionStatus()
	if server := e.server.Load(); server != nil {
		copied := *server // the snapshot is the caller's to change
		st.Server = &copied
	}
	st.Audit = e.auditStatus()
	return st
}

// StatusChanged returns a channel closed at the next change that moves Status.Seq.
func (e *Engine) StatusChanged() <-chan struct{} { return e.book.Changed() }

func (e *Engine) leaderStatus() status.LeaderStatus {
	if e.lead == nil {
		return status.LeaderStatus{Leading: true}
	}
	cfg := e.lead.Config()
	return status.LeaderStatus{Enabled: true, Leading: e.lead.Valid(), Identity: cfg.Identity,
		Lease: cfg.Namespace + "/" + cfg.Name, Holder: e.lead.Holder()}
}

func (e *Engine) informerStatus() []status.InformerStatus {
	active := e.factory.Active()
	infs := e.needs.informers()
	out := make([]status.InformerStatus, 0, len(active))
	for _, h := range e.factory.Health() {
		users, ok := active[h.Key]
		if !ok {
			continue
		}
		is := status.InformerStatus{WatchStatus: watchOf(h.Key), Users: users, Scripts: e.needs.scripts(h.Key),
			Healthy: h.Healthy, LastError: h.LastError, Relists: h.Relists, BytesReceived: h.BytesReceived}
		if !h.FailingSince.IsZero() {
			since := h.FailingSince
			is.FailingSince = &since
		}
		if !h.LastContact.IsZero() {
			contact := h.LastContact
			is.LastContact = &contact
		}
		is.Shard = informerShard(h.Key, h.Shard)
		if inf := infs[h.Key]; inf != nil {
			is.Synced = inf.HasSynced()
			is.Objects = len(inf.GetStore().ListKeys())
		}
		out = append(out, is)
	}
	slices.SortFunc(out, func(a, b status.InformerStatus) int {
		return strings.Compare(a.Resource+" "+a.Namespace+" "+a.LabelSelector+" "+a.FieldSelector,
			b.Resource+" "+b.Namespace+" "+b.LabelSelector+" "+b.FieldSelector)
	})
	return out
}
