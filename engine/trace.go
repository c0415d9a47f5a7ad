package engine

import (
	"github.com/jsinformer/jsinformer/internal/scriptcache"

	"slices"
	"sync"
)

// Trace recording: every event a version's worker handles, every reconcile run and every
// replay becomes a TraceRecord, kept in memory for Explain and streamed to Tail subscribers.
//
// Bounds: at most TracePerObject records per object and Config.TraceRecords overall; when
// either is full the oldest record goes first. Records live in one ring of TraceRecords slots
// (slot = seq mod size); each object keeps the sequence numbers of its last records. A record
// overwritten in the ring is gone for its object too, and an object whose newest record was
// overwritten is forgotten, so the per-object map never holds more objects than the ring
// holds records. Recording takes one mutex per handler call and copies no object.

const (
	// DefaultTraceRecords is the overall cap on trace records kept in memory.
	DefaultTraceRecords = 10000
	// TracePerObject is the most records kept per object (Explain's default shows them all).
	TracePerObject = 20
	// TraceLogsPerCall bounds the log lines one record keeps of a call's output.
	TraceLogsPerCall = 20
	// TraceWritesPerCall bounds the API writes one record keeps of a call.
	TraceWritesPerCall = 20
	// traceMessageChars bounds one log line's message in a record.
	traceMessageChars = 2000
	// tailBuffer is how many records a slow tail subscriber may fall behind before it misses some.
	tailBuffer = 1024
)

// recorder keeps the trace. Safe for concurrent use; nil records nothing.
type recorder struct {
	mu      sync.Mutex
	ring    []TraceRecord
	next    uint64 // the seq of the next record; seqs start at 1
	objects map[scriptcache.Key]*objectTrace
	subs    map[*tailSub]struct{}
}

// objectTrace is the seqs of one object's last records, oldest first.
type objectTrace struct {
	seqs []uint64
	// dropped: a record of this object was pushed out by the per-object cap.
	dropped bool
}

// newRecorder returns a recorder of size records, or nil when size is negative (off).
func newRecorder(size int) *recorder {
	if size < 0 {
		return nil
	}
	if size == 0 {
		size = DefaultTraceRecords
	}
	return &recorder{ring: make([]TraceRecord, size), next: 1, objects: map[scriptcache.Key]*objectTrace{}, subs: map[*tailSub]struct{}{}}
}

// record stores r (its Seq is set here) and hands it to the tail subscribers that want it.
func (r *recorder) record(rec TraceRecord) {
	if r == nil {
		return
	}
	k := scriptcache.Key{Resource: rec.Resource, Object: rec.Object}
	r.mu.Lock()
	rec.Seq = r.next
	r.next++
	slot := &r.ring[rec.Seq%uint64(len(r.ring))]
	if slot.Seq != 0 {
		r.forget(*slot)
	}
	*slot = rec
	ot := r.objects[k]
	if ot == nil {
		ot = &objectTrace{seqs: make([]uint64, 0, 2)}
		r.objects[k] = ot
	}
	if len(ot.seqs) == TracePerObject {
		ot.seqs = append(ot.seqs[:0], ot.seqs[1:]...)
		ot.dropped = true
	}
	ot.seqs = append(ot.seqs, rec.Seq)
	for s := range r.subs {
		s.offer(rec)
	}
	r.mu.Unlock()
}

// forget drops old, about to be overwritten, from its object; called with mu held.
func (r *recorder) forget(old TraceRecord) {
	k := scriptcache.Key{Resource: old.Resource, Object: old.Object}
	ot := r.objects[k]
	if ot == nil {
		return
	}
	if ot.seqs[len(ot.seqs)-1] == old.Seq {
		delete(r.objects, k) // its newest record goes: nothing of it is left
		return
	}
	if i := slices.Index(ot.seqs, old.Seq); i >= 0 {
		ot.seqs = slices.Delete(ot.seqs, 0, i+1)
		ot.dropped = true
	}
}

// object returns the last limit records of one object, oldest first, and whether older ones
// were dropped.
func (r *recorder) object(resource, key string, limit int) ([]TraceRecord, bool) {
	if r == nil {
		return nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ot := r.objects[scriptcache.Key{Resource: resource, Object: key}]
	if ot == nil {
		return nil, false
	}
	seqs := ot.seqs
	dropped := ot.dropped
	if limit > 0 && len(seqs) > limit {
		seqs, dropped = seqs[len(seqs)-limit:], true
	}
	out := make([]TraceRecord, 0, len(seqs))
	for _, s := range seqs {
		out = append(out, r.ring[s%uint64(len(r.ring))])
	}
	return out, dropped
}
