package trace

import (
	"slices"
	"sync"

	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/internal/scriptcache"
)

// Bounds: at most inspection.TracePerObject records per object and the Recorder's size
// overall; when either is full the oldest record goes first. Records live in one ring of size
// slots (slot = seq mod size); each object keeps the sequence numbers of its last records. A
// record overwritten in the ring is gone for its object too, and an object whose newest
// record was overwritten is forgotten, so the per-object map never holds more objects than
// the ring holds records. Recording takes one mutex per handler call and copies no object.

// messageChars bounds one log line's message in a record.
const messageChars = 2000

// Recorder keeps the trace. Safe for concurrent use; a nil Recorder records nothing.
type Recorder struct {
	mu      sync.Mutex
	ring    []inspection.TraceRecord
	next    uint64 // the seq of the next record; seqs start at 1
	objects map[scriptcache.Key]*objectTrace
	subs    map[*tailSub]struct{}
	// free is the objectTrace of the object forgotten last, emptied, for the next object
	// recorded: a reload records every cached object once, each pushing out another's only
	// record, and this way that costs no allocation per object.
	free *objectTrace
}

// objectTrace is the seqs of one object's last records, oldest first.
type objectTrace struct {
	seqs []uint64
	// dropped: a record of this object was pushed out by the per-object cap.
	dropped bool
}

// New returns a Recorder of size records (inspection.DefaultTraceRecords when zero), or nil when size is
// negative (recording off).
func New(size int) *Recorder {
	if size < 0 {
		return nil
	}
	if size == 0 {
		size = inspection.DefaultTraceRecords
	}
	return &Recorder{ring: make([]inspection.TraceRecord, size), next: 1, objects: map[scriptcache.Key]*objectTrace{}, subs: map[*tailSub]struct{}{}}
}

// Record stores rec (its Seq is set here) and hands it to the subscribers that want it.
func (r *Recorder) Record(rec inspection.TraceRecord) {
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
		if ot, r.free = r.free, nil; ot == nil {
			ot = &objectTrace{seqs: make([]uint64, 0, 2)}
		}
		r.objects[k] = ot
	}
	if len(ot.seqs) == inspection.TracePerObject {
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
func (r *Recorder) forget(old inspection.TraceRecord) {
	k := scriptcache.Key{Resource: old.Resource, Object: old.Object}
	ot := r.objects[k]
	if ot == nil {
		return
	}
	if ot.seqs[len(ot.seqs)-1] == old.Seq {
		delete(r.objects, k) // its newest record goes: nothing of it is left
		ot.seqs, ot.dropped = ot.seqs[:0], false
		r.free = ot
		return
	}
	if i := slices.Index(ot.seqs, old.Seq); i >= 0 {
		ot.seqs = slices.Delete(ot.seqs, 0, i+1)
		ot.dropped = true
	}
}

// Object returns the last limit records of one object (all it keeps when limit <= 0), oldest
// first, and whether older ones were dropped.
func (r *Recorder) Object(resource, key string, limit int) ([]inspection.TraceRecord, bool) {
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
	out := make([]inspection.TraceRecord, 0, len(seqs))
	for _, s := range seqs {
		out = append(out, r.ring[s%uint64(len(r.ring))])
	}
	return out, dropped
}
