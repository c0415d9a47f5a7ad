package trace

import (
	"hash/maphash"
	"slices"
	"sync"

	"github.com/jsinformer/jsinformer/inspection"
)

// Bounds: at most inspection.TracePerObject records per object and the Recorder's size
// overall; when either is full the oldest record goes first. Records live in one ring of size
// slots (slot = seq mod size). Each slot also keeps its record's object hash and the seq of
// the same object's previous record, and one map keeps each object's newest seq: the records
// of an object are a chain through the ring, walked only when Object asks. A record
// overwritten in the ring is gone for its object too (the chain ends there), and an object
// whose newest record was overwritten leaves the map, so the map never holds more objects than
// the ring holds records.
//
// Why a chain and not a list per object: Record runs on every handler call of every version,
// the serial path of an initial sync. A map keyed by the two strings, with a slice per object
// to shift, cost ~1.5 µs a record at 10,000 objects (cache misses on the keys' bytes and the
// slices); a uint64 key and two words per slot cost a hash of bytes just written and one map
// lookup, insert and (for the record overwritten) delete on words. Object pays instead: at most
// TracePerObject steps (more only on a hash collision, whose records it skips).

// messageChars bounds one log line's message in a record.
const messageChars = 2000

// Recorder keeps the trace. Safe for concurrent use; a nil Recorder records nothing.
type Recorder struct {
	mu    sync.Mutex
	ring  []inspection.TraceRecord
	links []link // links[i] is ring[i]'s
	next  uint64 // the seq of the next record; seqs start at 1
	// newest maps an object's hash to the seq of its newest record still in the ring.
	newest map[uint64]uint64
	seed   maphash.Seed
	subs   map[*tailSub]struct{}
}

// link places one record in its object's chain.
type link struct {
	hash uint64 // of the record's resource and object
	prev uint64 // the seq of the object's previous record; 0: none was recorded
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
	return &Recorder{ring: make([]inspection.TraceRecord, size), links: make([]link, size), next: 1,
		newest: map[uint64]uint64{}, seed: maphash.MakeSeed(), subs: map[*tailSub]struct{}{}}
}

// Record stores rec (its Seq is set here) and hands it to the subscribers that want it.
func (r *Recorder) Record(rec inspection.TraceRecord) {
	if r == nil {
		return
	}
	h := r.hash(rec.Resource, rec.Object)
	r.mu.Lock()
	rec.Seq = r.next
	r.next++
	i := rec.Seq % uint64(len(r.ring))
	if old := r.ring[i].Seq; old != 0 && r.newest[r.links[i].hash] == old {
		delete(r.newest, r.links[i].hash) // its object's newest record goes: nothing of it is left
	}
	r.ring[i] = rec
	r.links[i] = link{hash: h, prev: r.newest[h]}
	r.newest[h] = rec.Seq
	for s := range r.subs {
		s.offer(rec)
	}
	r.mu.Unlock()
}

// hash identifies an object within the Recorder: its resource and key (namespace/name).
func (r *Recorder) hash(resource, object string) uint64 {
	var h maphash.Hash
	h.SetSeed(r.seed)
	h.WriteString(resource)
	h.WriteByte(0) // no resource contains NUL: "a"+"b/c" and "a/b"+"c" differ
	h.WriteString(object)
	return h.Sum64()
}

// holds reports whether the record of seq is still in the ring; called with mu held.
func (r *Recorder) holds(seq uint64) bool {
	return seq != 0 && seq < r.next && r.next-seq <= uint64(len(r.ring))
}

// Object returns the last limit records of one object (all it keeps, at most
// inspection.TracePerObject, when limit <= 0), oldest first, and whether older ones were
// dropped (by the per-object cap, the overall cap or limit).
func (r *Recorder) Object(resource, key string, limit int) ([]inspection.TraceRecord, bool) {
	if r == nil {
		return nil, false
	}
	keep := inspection.TracePerObject
	if limit > 0 && limit < keep {
		keep = limit
	}
	h := r.hash(resource, key)
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []inspection.TraceRecord
	seq := r.newest[h]
	for ; r.holds(seq); seq = r.links[seq%uint64(len(r.ring))].prev {
		rec := &r.ring[seq%uint64(len(r.ring))]
		if rec.Resource != resource || rec.Object != key {
			continue // another object of the same hash
		}
		if len(out) == keep {
			break
		}
		out = append(out, *rec)
	}
	slices.Reverse(out)
	return out, seq != 0 // the chain goes on: an older record was cut here or overwritten
}
