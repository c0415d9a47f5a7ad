package memguard

import (
	"context"
	"log/slog"
	"runtime"
	"testing"
	"time"
)

func TestSuspect(t *testing.T) {
	t.Parallel()
	s := func(bytes ...int64) []memSample {
		out := make([]memSample, len(bytes))
		for i, b := range bytes {
			out[i] = memSample{bytes: b}
		}
		return out
	}
	tests := []struct {
		name    string
		history map[string][]memSample
		want    string
	}{
		{name: "the one growing", history: map[string][]memSample{"leak": s(10, 20, 30), "big": s(90, 90, 90)}, want: "leak"},
		{name: "the largest of two growing", history: map[string][]memSample{"a": s(10, 20, 30), "b": s(20, 40, 60)}, want: "b"},
		{name: "too few samples to say", history: map[string][]memSample{"a": s(10, 60)}},
		{name: "grew, then shrank", history: map[string][]memSample{"a": s(10, 60, 50)}},
		{name: "growing but small", history: map[string][]memSample{"a": s(1, 2, 3)}},
		{name: "too large to measure counts as growing", history: map[string][]memSample{
			"a": {{bytes: 50, truncated: true}}, "b": s(10, 20, 30)}, want: "a"},
		{name: "too large to measure, whatever the walk reached", history: map[string][]memSample{
			"a": {{bytes: 2, truncated: true}}}, want: "a"},
		{name: "nothing", history: map[string][]memSample{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := suspect(tt.history, 5)
			if got != tt.want || ok != (tt.want != "") {
				t.Fatalf("suspect = %q, %v; want %q", got, ok, tt.want)
			}
		})
	}
}

// fakeMeasured is a version whose runtime grows by step at every measurement it is asked for.
type fakeMeasured struct {
	bytes, step int64
	seq         uint64
	requested   int
	finished    chan struct{} // nil: released at once
}

func (f *fakeMeasured) Released() <-chan struct{} {
	if f.finished == nil {
		return releasedAtOnce
	}
	return f.finished
}

var releasedAtOnce = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (f *fakeMeasured) RequestMemory() {
	f.requested++
	f.bytes += f.step
	f.seq++
}

func (f *fakeMeasured) Memory() (int64, uint64, bool) { return f.bytes, f.seq, false }

// TestMemoryGuardChecks drives the guard's checks with a fake heap: nothing is measured below
// half the limit; above it the versions are measured; above 80 % the growing one is stopped,
// once, and the guard waits before acting again.
func TestMemoryGuardChecks(t *testing.T) {
	t.Parallel()
	const limit = 1000
	leak := &fakeMeasured{bytes: 200, step: 50}
	steady := &fakeMeasured{bytes: 300}
	heap := int64(400)
	var stopped []Version
	g := &Guard{limit: limit, logger: slog.New(slog.DiscardHandler),
		read:    func() Reading { return Reading{Live: uint64(heap), InUse: uint64(heap)} },
		collect: func() {}, now: time.Now,
		serving: func() []Version { return []Version{leak, steady} },
		stop:    func(_ context.Context, m Version, _ int64) { stopped = append(stopped, m) },
		history: map[Version][]memSample{}, seqs: map[Version]uint64{}}
	g.check(t.Context())
	if leak.requested != 0 {
		t.Fatalf("measured below half the limit")
	}
	heap = 600
	for range 4 {
		g.check(t.Context())
	}
	if leak.requested != 4 || steady.requested != 4 || len(stopped) != 0 {
		t.Fatalf("above half the limit: requested %d/%d, stopped %d; want 4/4 and none stopped below 80 %%",
			leak.requested, steady.requested, len(stopped))
	}
	heap = 900
	g.check(t.Context())
	if len(stopped) != 1 || stopped[0] != leak {
		t.Fatalf("above 80 %%: stopped %v, want the leaking version only", stopped)
	}
	for range quietChecks {
		g.check(t.Context())
	}
	if len(stopped) != 1 {
		t.Fatalf("acted again during the quiet checks after a stop: %d stops", len(stopped))
	}
}

// guardHeap is the runtime's heap for the guard: a live figure from the last collection, the
// heap in use now, and what a collection would find live. Its clock moves a second a reading.
type guardHeap struct {
	r           Reading
	liveNow     uint64
	collections int
	clock       time.Time
}

func (h *guardHeap) now() time.Time {
	h.clock = h.clock.Add(time.Second)
	return h.clock
}

func (h *guardHeap) read() Reading { return h.r }

func (h *guardHeap) collect() {
	h.collections++
	h.r.Cycles++
	h.r.Live, h.r.InUse = h.liveNow, h.liveNow
}

// TestMemoryGuardRefreshesAStaleLiveHeap: the live heap is known only after a collection, and
// the runtime lets the heap double between two. When the heap in use has reached 80 % of the
// limit but the last live figure is below it, the guard collects to know the live heap now,
// only if a version qualifies for a stop, and acts on the fresh figure.
func TestMemoryGuardRefreshesAStaleLiveHeap(t *testing.T) {
	t.Parallel()
	const limit = 1000
	tests := []struct {
		name         string
		leakStep     int64  // 0: no version grows
		live, inUse  uint64 // the figures once the versions are measured
		liveNow      uint64 // what a collection finds
		wantCollects int
		wantStop     bool
	}{
		{name: "a stale figure and a growing version: collects, and stops it on the fresh figure",
			leakStep: 50, live: 500, inUse: 900, liveNow: 850, wantCollects: 1, wantStop: true},
		{name: "a stale figure, fresh still under the threshold: collects, stops nothing",
			leakStep: 50, live: 500, inUse: 900, liveNow: 700, wantCollects: 1},
		{name: "a stale figure and no version growing: leaves the collector alone",
			live: 500, inUse: 900, liveNow: 850},
		{name: "the heap in use under the threshold: nothing to refresh",
			leakStep: 50, live: 500, inUse: 790, liveNow: 790},
		{name: "a figure within 5 % of the heap in use: no collection",
			leakStep: 50, live: 790, inUse: 820, liveNow: 820},
		{name: "a fresh figure past the threshold: stops without collecting",
			leakStep: 50, live: 850, inUse: 880, liveNow: 880, wantStop: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			leak := &fakeMeasured{bytes: 200, step: tt.leakStep}
			heap := &guardHeap{r: Reading{Live: 550, InUse: 600}}
			var stopped []Version
			g := &Guard{limit: limit, interval: time.Millisecond, logger: slog.New(slog.DiscardHandler),
				read: heap.read, collect: heap.collect, now: heap.now,
				serving: func() []Version { return []Version{leak} },
				stop:    func(_ context.Context, m Version, _ int64) { stopped = append(stopped, m) },
				history: map[Version][]memSample{}, seqs: map[Version]uint64{}}
			for range growthSamples + 1 { // between half and 80 %: measured, not acted on
				g.check(t.Context())
			}
			if heap.collections != 0 || len(stopped) != 0 {
				t.Fatalf("under the threshold: %d collections, %d stops; want none", heap.collections, len(stopped))
			}
			heap.r.Live, heap.r.InUse, heap.liveNow = tt.live, tt.inUse, tt.liveNow
			g.check(t.Context())
			if heap.collections != tt.wantCollects {
				t.Errorf("%d collections, want %d", heap.collections, tt.wantCollects)
			}
			if got := len(stopped) == 1 && stopped[0] == leak; got != tt.wantStop || len(stopped) > 1 {
				t.Errorf("stopped %v, want the growing version stopped: %v", stopped, tt.wantStop)
			}
		})
	}
}

// After a stop, the guard holds off until the stopped version has released its runtimes (their
// memory counts until then), then collects before acting again: the live figure of the
// collection before still counts the stopped version, which must not be blamed on another
// version, nor warned about.
func TestMemoryGuardRefreshesAfterAStop(t *testing.T) {
	t.Parallel()
	const limit = 1000
	leak := &fakeMeasured{bytes: 200, step: 50, finished: make(chan struct{})}
	other := &fakeMeasured{bytes: 200, step: 50}
	heap := &guardHeap{r: Reading{Live: 600, InUse: 600}, liveNow: 300}
	var stopped []Version
	g := &Guard{limit: limit, interval: time.Millisecond, logger: slog.New(slog.DiscardHandler),
		read: heap.read, collect: heap.collect, now: heap.now,
		serving: func() []Version { return []Version{leak, other} },
		stop:    func(_ context.Context, m Version, _ int64) { stopped = append(stopped, m) },
		history: map[Version][]memSample{}, seqs: map[Version]uint64{}}
	leak.step = 60 // the larger of the two growing versions
	for range growthSamples + 1 {
		g.check(t.Context())
	}
	heap.r.Live, heap.r.InUse = 900, 900
	g.check(t.Context())
	if len(stopped) != 1 || stopped[0] != leak {
		t.Fatalf("stopped %v at 90 %% of the limit, want the larger growing version", stopped)
	}
	for range quietChecks + 2 {
		g.check(t.Context())
	}
	if heap.collections != 0 || len(stopped) != 1 {
		t.Fatalf("before the stopped version released its runtimes: %d collections, %d stops; want none",
			heap.collections, len(stopped)-1)
	}
	close(leak.finished)
	g.check(t.Context())
	if heap.collections != 1 || len(stopped) != 1 {
		t.Errorf("once released: %d collections, %d more stops; want one collection (the figure predates the stop) and no other stop",
			heap.collections, len(stopped)-1)
	}
}

// The threshold is 80 % of the limit, lower when the live heap grows fast enough to pass the
// limit before the guard's next decision, never under half the limit.
func TestHeapTrendThreshold(t *testing.T) {
	t.Parallel()
	const limit = 1000
	start := time.Unix(1000, 0)
	tests := []struct {
		name     string
		readings []Reading // one a second
		took     time.Duration
		want     int64
	}{
		{name: "no growth seen", readings: []Reading{{Live: 500, Cycles: 1}}, want: 800},
		{name: "slow growth", readings: []Reading{{Live: 500, Cycles: 1}, {Live: 510, Cycles: 2}}, want: 800},
		{name: "fast growth: two seconds' worth below the limit",
			readings: []Reading{{Live: 500, Cycles: 1}, {Live: 600, Cycles: 2}}, want: 800},
		{name: "faster", readings: []Reading{{Live: 500, Cycles: 1}, {Live: 650, Cycles: 2}}, want: 700},
		{name: "a slow refresh collection counts too",
			readings: []Reading{{Live: 500, Cycles: 1}, {Live: 600, Cycles: 2}}, took: time.Second, want: 700},
		{name: "the same collection read again changes nothing", // else 300/s: 600
			readings: []Reading{{Live: 500, Cycles: 1}, {Live: 500, Cycles: 1}, {Live: 800, Cycles: 2}}, want: 700},
		{name: "never under half the limit", readings: []Reading{{Live: 100, Cycles: 1}, {Live: 600, Cycles: 2}}, want: 500},
		{name: "shrinking", readings: []Reading{{Live: 600, Cycles: 1}, {Live: 500, Cycles: 2}}, want: 800},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var trend heapTrend
			for i, r := range tt.readings {
				trend.observe(r, start.Add(time.Duration(i)*time.Second))
			}
			trend.collected(tt.took)
			if got := trend.threshold(limit, time.Second); got != tt.want {
				t.Errorf("threshold = %d, want %d (rate %.0f/s)", got, tt.want, trend.rate)
			}
		})
	}
}

// TestProcessHeap checks the runtime/metrics names of the default reading: a wrong one reads
// as zero (KindBad).
func TestProcessHeap(t *testing.T) {
	t.Parallel()
	runtime.GC() // a live figure and a cycle, whatever ran before
	if r := processHeap(); r.Live == 0 || r.InUse == 0 || r.Cycles == 0 {
		t.Fatalf("processHeap() = %+v: a metric read as zero", r)
	}
}

// TestStartJoin: the guard checks on its own goroutine until join, which returns once that
// goroutine has: no check runs after it.
func TestStartJoin(t *testing.T) {
	t.Parallel()
	checks := make(chan struct{}, 1000)
	g := New(Config{Limit: 100, Interval: time.Millisecond, Logger: slog.New(slog.DiscardHandler), Now: time.Now,
		Read:    func() Reading { checks <- struct{}{}; return Reading{} },
		Collect: func() {}, Serving: func() []Version { return nil }, Stop: func(context.Context, Version, int64) {}})
	join := g.Start(t.Context())
	<-checks // it runs
	join()
	n := len(checks)
	time.Sleep(20 * time.Millisecond) // twenty intervals: a goroutine left would check again
	if len(checks) != n {
		t.Fatalf("the guard checked %d times after join", len(checks)-n)
	}
}
