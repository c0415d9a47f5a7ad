package gcpace

import (
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
)

const mb = 1 << 20

func TestHeapReadingDue(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		r       reading
		perLoad uint64
		want    bool
	}{
		{"no load measured yet", reading{inUse: 340 * mb, goal: 350 * mb}, 0, false},
		{"room for more than two loads", reading{inUse: 200 * mb, goal: 350 * mb}, 50 * mb, false},
		{"room for exactly two loads", reading{inUse: 250 * mb, goal: 350 * mb}, 50 * mb, true},
		{"room for one load", reading{inUse: 300 * mb, goal: 350 * mb}, 50 * mb, true},
		{"already past the goal", reading{inUse: 400 * mb, goal: 350 * mb}, 1, true},
		{"small loads on a big headroom", reading{inUse: 180 * mb, goal: 350 * mb}, 2 * mb, false},
		{"GOGC=off", reading{inUse: 900 * mb, goal: 950 * mb, off: true}, 500 * mb, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := c.r.due(c.perLoad); got != c.want {
				t.Errorf("%+v.due(%d MB) = %v, want %v", c.r, c.perLoad/mb, got, c.want)
			}
		})
	}
}

// fakeHeap is a Pacer's view of the heap that a test sets.
type fakeHeap struct {
	mu sync.Mutex
	r  reading
}

func (f *fakeHeap) read() reading {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.r
}

func (f *fakeHeap) set(r reading) {
	f.mu.Lock()
	f.r = r
	f.mu.Unlock()
}

func testCollector(heap *fakeHeap, collect func()) *Pacer {
	return &Pacer{read: heap.read, collect: collect, logger: slog.New(slog.DiscardHandler), enabled: true}
}

// TestCollectorSettle follows a reload: the load's allocation is measured from its mark,
// and settle collects only when less than two such loads fit below the goal.
func TestCollectorSettle(t *testing.T) {
	t.Parallel()
	heap := &fakeHeap{r: reading{allocs: 1000 * mb, inUse: 100 * mb, goal: 350 * mb}}
	var collections atomic.Int32
	c := testCollector(heap, func() { collections.Add(1) })

	c.Settle()
	if n := collections.Load(); n != 0 {
		t.Fatalf("collected %d times before any load was measured", n)
	}
	mark := c.Mark()
	heap.set(reading{allocs: 1060 * mb, inUse: 160 * mb, goal: 350 * mb})
	c.Loaded(mark)
	if c.perLoad.Load() != 60*mb {
		t.Fatalf("perLoad = %d MB, want 60", c.perLoad.Load()/mb)
	}
	// Smaller loads do not lower it while it is among the last recentLoads ones.
	for i := range recentLoads {
		heap.set(reading{allocs: (1070 + 10*uint64(i)) * mb, inUse: 160 * mb, goal: 350 * mb})
		c.Loaded((1060 + 10*uint64(i)) * mb) // 10 MB each
		want := uint64(60 * mb)
		if i == recentLoads-1 {
			want = 10 * mb // the 60 MB load is no longer among the last ones
		}
		if c.perLoad.Load() != want {
			t.Fatalf("perLoad after %d loads of 10 MB = %d MB, want %d", i+1, c.perLoad.Load()/mb, want/mb)
		}
	}
	heap.set(reading{allocs: 1060 * mb, inUse: 160 * mb, goal: 350 * mb})
	c.Loaded(1000 * mb) // 60 MB again, for what follows
	c.Settle()          // 190 MB left, two loads need 120
	if n := collections.Load(); n != 0 {
		t.Fatalf("collected with room for three loads")
	}
	heap.set(reading{allocs: 1120 * mb, inUse: 240 * mb, goal: 350 * mb})
	c.Settle() // 110 MB left
	if n := collections.Load(); n != 1 {
		t.Fatalf("collected %d times with room for less than two loads, want 1", n)
	}
}

// TestCollectorOneAtATime checks that loads settling while a collection runs do not start
// another (a ConfigMap volume swap reloads every script at once), and that the next settle
// after it may.
func TestCollectorOneAtATime(t *testing.T) {
	t.Parallel()
	heap := &fakeHeap{r: reading{inUse: 340 * mb, goal: 350 * mb}}
	release := make(chan struct{})
	running := make(chan struct{})
	var collections atomic.Int32
	c := testCollector(heap, func() {
		if collections.Add(1) == 1 {
			close(running)
			<-release
		}
	})
	c.perLoad.Store(10 * mb)
	var wg sync.WaitGroup
	wg.Go(c.InitialSynced)
	<-running
	c.Settle() // a second collection would be counted, not blocked
	c.InitialSynced()
	if n := collections.Load(); n != 1 {
		t.Fatalf("collections while one runs = %d, want 1", n)
	}
	close(release)
	wg.Wait()
	c.Settle()
	if n := collections.Load(); n != 2 {
		t.Fatalf("collections after the first finished = %d, want 2", n)
	}
}

// TestCollectorLeavesGCOff checks GOGC=off (with or without GOMEMLIMIT) is respected: no
// collection after the initial sync or a reload, however full the heap.
func TestCollectorLeavesGCOff(t *testing.T) {
	t.Parallel()
	heap := &fakeHeap{r: reading{inUse: 340 * mb, goal: 350 * mb, off: true}}
	var collections atomic.Int32
	c := testCollector(heap, func() { collections.Add(1) })
	c.perLoad.Store(50 * mb)
	c.InitialSynced()
	c.Settle()
	if n := collections.Load(); n != 0 {
		t.Fatalf("collected %d times with GOGC=off", n)
	}
}

// TestReadHeap checks the runtime/metrics names: a wrong one reads as zero (KindBad).
func TestReadHeap(t *testing.T) {
	t.Parallel()
	r := readHeap()
	if r.allocs == 0 || r.goal == 0 || r.inUse == 0 {
		t.Fatalf("readHeap() = %+v: a metric read as zero", r)
	}
	if want := os.Getenv("GOGC") == "off"; r.off != want {
		t.Errorf("off = %v with GOGC=%q", r.off, os.Getenv("GOGC"))
	}
}

// TestHeapReadingLiftPercent: the lift makes room for the heap in use and 1.5 loads over the
// live heap, only above the percent in force, and never past maxLiftPercent.
func TestHeapReadingLiftPercent(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		r       reading
		perLoad uint64
		want    int
	}{
		{"no load measured yet", reading{live: 64 * mb, inUse: 64 * mb, gogc: 100}, 0, 0},
		{"a load larger than the live heap", reading{live: 64 * mb, inUse: 64 * mb, gogc: 100}, 70 * mb, 165},
		{"a small load fits already", reading{live: 64 * mb, inUse: 64 * mb, gogc: 100}, 10 * mb, 0},
		{"the user's percent is higher", reading{live: 64 * mb, inUse: 64 * mb, gogc: 400}, 70 * mb, 0},
		{"bounded", reading{live: 10 * mb, inUse: 10 * mb, gogc: 100}, 500 * mb, maxLiftPercent},
		{"GOGC=off", reading{live: 64 * mb, inUse: 64 * mb, off: true}, 70 * mb, 0},
		{"nothing collected yet", reading{inUse: 64 * mb, gogc: 100}, 70 * mb, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := c.r.liftPercent(c.perLoad); got != c.want {
				t.Errorf("%+v.liftPercent(%d MB) = %d, want %d", c.r, c.perLoad/mb, got, c.want)
			}
		})
	}
}

// TestCollectorLift: overlapping loads share one lift, the highest percent holds, and the
// user's percent is back once the last one ends, however often each end is called.
func TestCollectorLift(t *testing.T) {
	t.Parallel()
	heap := &fakeHeap{r: reading{live: 64 * mb, inUse: 64 * mb, gogc: 100}}
	c := testCollector(heap, func() {})
	percent := 100
	c.setPercent = func(p int) int { old := percent; percent = p; return old }
	c.perLoad.Store(70 * mb)
	first := c.Lift()
	if percent != 165 {
		t.Fatalf("GC percent during a load = %d, want 165", percent)
	}
	heap.set(reading{live: 64 * mb, inUse: 64 * mb, gogc: 165})
	c.perLoad.Store(20 * mb) // a smaller load starting meanwhile needs less: the lift stays
	second := c.Lift()
	if percent != 165 {
		t.Fatalf("GC percent with two loads = %d, want 165", percent)
	}
	heap.set(reading{live: 64 * mb, inUse: 64 * mb, gogc: 100})
	c.perLoad.Store(90 * mb)
	third := c.Lift()
	if percent != 211 {
		t.Fatalf("GC percent with a larger load = %d, want 211", percent)
	}
	first()
	first()
	second()
	if percent != 211 {
		t.Fatalf("GC percent with one load left = %d, want 211", percent)
	}
	third()
	if percent != 100 {
		t.Fatalf("GC percent after every load = %d, want the user's 100", percent)
	}
	c.enabled = false
	c.Lift()()
	if percent != 100 {
		t.Fatalf("a disabled Pacer changed the GC percent to %d", percent)
	}
}
