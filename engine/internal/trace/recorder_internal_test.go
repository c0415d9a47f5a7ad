package trace

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/jsinformer/jsinformer/inspection"
)

// The Recorder keeps at most inspection.TracePerObject records per object and its size
// overall, the oldest going first, and forgets objects whose records are all gone.
func TestRecorderBounds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		size, objects  int
		perObject      int // records written per object, round-robin
		wantKept       int // records kept of the last object
		wantDropped    bool
		wantObjectsMax int
	}{
		{"under both caps", 100, 3, 5, 5, false, 3},
		{"per-object cap", 1000, 2, inspection.TracePerObject + 7, inspection.TracePerObject, true, 2},
		{"overall cap", 50, 20, 5, 3, true, 20},
		{"overall cap forgets old objects", 10, 100, 1, 1, false, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := New(tt.size)
			for i := range tt.perObject {
				for o := range tt.objects {
					r.Record(inspection.TraceRecord{Resource: "v1/configmaps", Object: fmt.Sprintf("ns/o%d", o), Event: fmt.Sprint(i)})
				}
			}
			last := fmt.Sprintf("ns/o%d", tt.objects-1)
			got, dropped := r.Object("v1/configmaps", last, 0)
			if len(got) != tt.wantKept || dropped != tt.wantDropped {
				t.Fatalf("kept %d records of %s (dropped %v), want %d (%v)", len(got), last, dropped, tt.wantKept, tt.wantDropped)
			}
			for i := 1; i < len(got); i++ {
				if got[i].Seq <= got[i-1].Seq {
					t.Fatalf("records not oldest first: %d then %d", got[i-1].Seq, got[i].Seq)
				}
			}
			if want := fmt.Sprint(tt.perObject - 1); got[len(got)-1].Event != want {
				t.Errorf("newest record is %q, want %q", got[len(got)-1].Event, want)
			}
			if n := len(r.newest); n > tt.wantObjectsMax || n > tt.size {
				t.Errorf("%d objects tracked, want at most %d and the ring size %d", n, tt.wantObjectsMax, tt.size)
			}
		})
	}
}

// An object whose records were all pushed out is forgotten: the objects recorded after it
// start with their own records only, not the forgotten one's or its "dropped" mark, and a
// record of the forgotten object after that starts a new chain.
func TestRecorderReusesForgottenObjects(t *testing.T) {
	t.Parallel()
	const size = 50
	r := New(size)
	for i := range inspection.TracePerObject + 5 { // o-old loses records to the per-object cap: dropped
		r.Record(inspection.TraceRecord{Resource: "v1/configmaps", Object: "ns/o-old", Event: fmt.Sprint(i)})
	}
	if _, dropped := r.Object("v1/configmaps", "ns/o-old", 0); !dropped {
		t.Fatal("setup: o-old has no record dropped")
	}
	for o := range size { // pushes every record of o-old out of the ring
		r.Record(inspection.TraceRecord{Resource: "v1/configmaps", Object: fmt.Sprintf("ns/o%d", o), Event: "add"})
	}
	if got, _ := r.Object("v1/configmaps", "ns/o-old", 0); len(got) != 0 {
		t.Fatalf("o-old still has %d records", len(got))
	}
	// o49's record pushed o-old's last one out, and took its bookkeeping; o-new pushes o0 out.
	r.Record(inspection.TraceRecord{Resource: "v1/configmaps", Object: "ns/o-new", Event: "add"})
	for o := 1; o <= size; o++ {
		key := fmt.Sprintf("ns/o%d", o)
		if o == size {
			key = "ns/o-new"
		}
		got, dropped := r.Object("v1/configmaps", key, 0)
		if len(got) != 1 || dropped || got[0].Object != key || got[0].Event != "add" {
			t.Fatalf("%s: %d records (dropped %v), want its one add", key, len(got), dropped)
		}
	}
	r.Record(inspection.TraceRecord{Resource: "v1/configmaps", Object: "ns/o-old", Event: "again"})
	if got, dropped := r.Object("v1/configmaps", "ns/o-old", 0); len(got) != 1 || dropped || got[0].Event != "again" {
		t.Fatalf("o-old recorded again: %d records (dropped %v), want its new one only", len(got), dropped)
	}
}

// The chains through the ring answer as a plain list of every record per object would: the
// last TracePerObject (or limit) records still in the ring, and dropped when an older one
// existed. Random objects over two resources, a ring smaller than the records written.
func TestRecorderMatchesAListPerObject(t *testing.T) {
	t.Parallel()
	const size, writes = 97, 5000
	rng := rand.New(rand.NewPCG(1, 2))
	r := New(size)
	var all []inspection.TraceRecord // every record, in order
	for range writes {
		rec := inspection.TraceRecord{Resource: []string{"v1/configmaps", "v1/secrets"}[rng.IntN(2)], Object: fmt.Sprintf("ns/o%d", rng.IntN(30))}
		r.Record(rec)
		rec.Seq = uint64(len(all) + 1)
		all = append(all, rec)
		if rng.IntN(10) != 0 {
			continue
		}
		for _, limit := range []int{0, 3} {
			got, dropped := r.Object(rec.Resource, rec.Object, limit)
			want, wantDropped := listOf(all, size, rec.Resource, rec.Object, limit)
			if !slices.EqualFunc(got, want, func(a, b inspection.TraceRecord) bool { return a.Seq == b.Seq }) || dropped != wantDropped {
				t.Fatalf("after %d records, %s %s limit %d: got %v (dropped %v), want %v (%v)", len(all), rec.Resource, rec.Object, limit, seqs(got), dropped, seqs(want), wantDropped)
			}
		}
	}
}

// listOf is the reference: of all records, those of one object still in a ring of size, the
// last TracePerObject (or limit) of them, and whether the object had an older one.
func listOf(all []inspection.TraceRecord, size int, resource, object string, limit int) ([]inspection.TraceRecord, bool) {
	keep := inspection.TracePerObject
	if limit > 0 && limit < keep {
		keep = limit
	}
	var mine []inspection.TraceRecord
	for _, rec := range all {
		if rec.Resource == resource && rec.Object == object {
			mine = append(mine, rec)
		}
	}
	// An object whose newest record left the ring is forgotten, all of it.
	if len(mine) == 0 || len(all)-int(mine[len(mine)-1].Seq) >= size {
		return nil, false
	}
	first := max(0, len(mine)-keep)
	for first < len(mine) && len(all)-int(mine[first].Seq) >= size {
		first++
	}
	// Records before the object was last forgotten do not count as dropped.
	start := 0
	for i := 1; i < len(mine); i++ {
		if forgottenBetween(mine[i-1].Seq, mine[i].Seq, size) {
			start = i
		}
	}
	return mine[first:], first > start
}

// forgottenBetween reports whether a record of seq prev had left a ring of size by the time
// the record of seq next was stored (next overwrites next-size first): its object was
// forgotten in between.
func forgottenBetween(prev, next uint64, size int) bool { return next-prev >= uint64(size) }

func seqs(recs []inspection.TraceRecord) []uint64 {
	out := make([]uint64, len(recs))
	for i, rec := range recs {
		out[i] = rec.Seq
	}
	return out
}

func TestRecorderLimitAndOff(t *testing.T) {
	t.Parallel()
	r := New(0)
	if len(r.ring) != inspection.DefaultTraceRecords {
		t.Fatalf("default size %d, want %d", len(r.ring), inspection.DefaultTraceRecords)
	}
	for range 5 {
		r.Record(inspection.TraceRecord{Resource: "v1/configmaps", Object: "ns/a"})
	}
	if got, dropped := r.Object("v1/configmaps", "ns/a", 2); len(got) != 2 || !dropped {
		t.Errorf("limit 2 gave %d records (dropped %v)", len(got), dropped)
	}
	off := New(-1)
	off.Record(inspection.TraceRecord{Resource: "v1/configmaps", Object: "ns/a"}) // must not panic
	if got, _ := off.Object("v1/configmaps", "ns/a", 0); got != nil {
		t.Errorf("recording off kept %v", got)
	}
}

// A slow tail subscriber misses records instead of blocking the recording worker.
func TestTailSubscriberNeverBlocks(t *testing.T) {
	t.Parallel()
	r := New(10)
	s := &tailSub{filter: inspection.TailFilter{Object: "ns/a"}, ch: make(chan inspection.TraceRecord, 2)}
	r.subs[s] = struct{}{}
	for range 5 {
		r.Record(inspection.TraceRecord{Resource: "v1/configmaps", Object: "ns/a"})
		r.Record(inspection.TraceRecord{Resource: "v1/configmaps", Object: "ns/b"})
	}
	if len(s.ch) != 2 || s.missed.Load() != 3 {
		t.Fatalf("subscriber got %d, missed %d; want 2 and 3 (ns/b filtered out)", len(s.ch), s.missed.Load())
	}
}
