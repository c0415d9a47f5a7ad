package trace

import (
	"fmt"
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
			if n := len(r.objects); n > tt.wantObjectsMax || n > tt.size {
				t.Errorf("%d objects tracked, want at most %d and the ring size %d", n, tt.wantObjectsMax, tt.size)
			}
		})
	}
}

// An object whose records were all pushed out leaves its bookkeeping to the next object
// recorded (Recorder.free): that object must start with its own records only, not the
// forgotten one's sequence numbers or its "dropped" mark.
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
