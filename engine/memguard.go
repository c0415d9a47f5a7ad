package engine

import (
	"context"
	"log/slog"
	"time"

	"github.com/jsinformer/jsinformer/scripting"
)

// The memory guard: under a memory limit, find the script whose runtime keeps growing and stop
// it before the process runs out of memory, keeping the others running.
//
// goja keeps no account of what a runtime allocates, so the guard asks: while the Go heap is
// above watchShare of the limit, every serving version measures its runtimes after its next
// call (scripting.Script.RequestMemoryUsage: the bytes reachable from the runtime, walked by
// internal/heapsize). Once the live heap is above its threshold (actShare of the limit, lower
// when the live heap grows fast: memtrend.go), the guard stops the largest version whose
// measurements grew over its last growthSamples (suspect), if it holds at least minShare of
// the limit. A version is measured only when it runs, which is also the only time it can grow.
//
// The live heap is known only at the end of a collection, and the runtime's pacing lets the
// heap double between two: a live figure of 200 MB can be followed by 400 MB at the next one.
// So the guard watches from the heap in use (live objects and garbage not yet collected, an
// upper bound of the live heap now), and when that bound has reached the threshold while the
// last live figure is below it, and a version qualifies for a stop, it collects itself to know
// (refresh). A process whose heap is large but whose scripts do not grow is never collected
// by the guard.

const (
	watchShare    = 0.5
	actShare      = 0.8
	minShare      = 0.1
	growthSamples = 3
	// staleShare of the limit is how far the heap in use may be above the last live figure
	// before the guard collects to refresh it: the guard's view of the live heap lags the
	// truth by at most that, and collects at most once per staleShare of allocation.
	staleShare = 0.05
	// quietChecks is how many checks the guard waits after a stop, for the memory to be freed;
	// longer while the stopped version has not closed its runtimes, up to maxQuietChecks.
	quietChecks    = 3
	maxQuietChecks = 30
)

// measured is what the guard needs of a version: its runtimes' memory, summed.
type measured interface {
	requestMemory()
	memory() (bytes int64, seq uint64, truncated bool)
	// released is closed once the version has closed its runtimes, after a stop.
	released() <-chan struct{}
}

// memSample is one measurement of a version.
type memSample struct {
	bytes     int64
	truncated bool
}

// memoryGuard checks the heap every interval. Its goroutine is started and joined by Run; it
// hands its verdicts to the loader, which owns the versions.
type memoryGuard struct {
	limit    int64
	interval time.Duration
	logger   *slog.Logger
	read     func() heapReading // the runtime's heap figures
	collect  func()             // a full collection, which refreshes the live figure
	now      func() time.Time
	serving  func() []measured
	stop     func(ctx context.Context, m measured, bytes int64)
	usage    func(m measured, bytes int64) // reports a version's latest measurement

	history map[measured][]memSample
	seqs    map[measured]uint64
	trend   heapTrend
	warned  bool // "no growing script" said for this episode above actShare
	// After a stop: the checks since, and the stopped version's released (the channel only:
	// the version itself must be collectable). Until a collection after the version released
	// its runtimes, the live figure counts them, so the guard refreshes before acting again.
	stopping  bool
	sinceStop int
	stopped   <-chan struct{}
}

func (g *memoryGuard) run(ctx context.Context) {
	t := time.NewTicker(g.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			g.check(ctx)
		}
	}
}

func (g *memoryGuard) check(ctx context.Context) {
	r := g.read()
	g.trend.observe(r, g.now())
	if float64(r.inUse) < watchShare*float64(g.limit) {
		clear(g.history)
		clear(g.seqs) // holds no version past the episode: a stopped one must be collectable
		g.warned, g.stopping, g.stopped = false, false, nil
		return
	}
	serving := g.serving()
	g.record(serving)
	for _, m := range serving {
		m.requestMemory()
	}
	if g.waiting() {
		return
	}
	at := g.threshold()
	if int64(r.inUse) < at {
		g.warned = false
		return
	}
	m, found := suspect(g.history, int64(minShare*float64(g.limit)))
	live := int64(r.live)
	stale := float64(int64(r.inUse)-live) >= staleShare*float64(g.limit)
	if (found && live < at && stale) || g.stopping {
		live = g.refresh()
		at = g.threshold()
	}
	g.stopping, g.stopped = false, nil
	if live < at {
		return
	}
	if !found {
		g.warnOnce(live)
		return
	}
	h := g.history[m]
	delete(g.history, m)
	g.stopping, g.sinceStop, g.stopped = true, 0, m.released()
	g.stop(ctx, m, h[len(h)-1].bytes)
}

// waiting reports whether the guard holds off after a stop: for quietChecks checks, and until
// the stopped version has released its runtimes, for at most maxQuietChecks (a runtime stuck
// in a call is abandoned, not released).
func (g *memoryGuard) waiting() bool {
	if !g.stopping {
		return false
	}
	g.sinceStop++
	if g.sinceStop <= quietChecks {
		return true
	}
	select {
	case <-g.stopped:
		return false
	default:
		return g.sinceStop < maxQuietChecks
	}
}

// refresh collects and returns the live heap that collection measured.
func (g *memoryGuard) refresh() int64 {
	start := g.now()
	g.collect()
	took := g.now().Sub(start)
	g.trend.collected(took)
	r := g.read()
	g.trend.observe(r, g.now())
	g.logger.Debug("memory guard collected garbage to read the live heap", "heap_bytes", r.live,
		"limit_bytes", g.limit, "took", took.Round(time.Millisecond).String())
	return int64(r.live)
}

// threshold is the live heap at which the guard acts: actShare of the limit, or less when the
// live heap grows fast enough to pass the limit before the guard's next decision.
func (g *memoryGuard) threshold() int64 {
	return g.trend.threshold(g.limit, g.interval)
}

// warnOnce says, once per episode above actShare, that no script is to blame.
func (g *memoryGuard) warnOnce(live int64) {
	if g.warned || float64(live) < actShare*float64(g.limit) {
		return
	}
	g.warned = true
	g.logger.Warn("memory near its limit, and no script's memory keeps growing",
		"heap_bytes", live, "limit_bytes", g.limit)
}

// record takes each version's new measurement, if it made one, and forgets versions gone.
func (g *memoryGuard) record(serving []measured) {
	alive := make(map[measured]bool, len(serving))
	for _, m := range serving {
		alive[m] = true
		bytes, seq, truncated := m.memory()
		if seq == g.seqs[m] {
			continue
		}
		g.seqs[m] = seq
		g.history[m] = append(g.history[m], memSample{bytes: bytes, truncated: truncated})
		if h := g.history[m]; len(h) > growthSamples {
			g.history[m] = h[len(h)-growthSamples:]
		}
		if g.usage != nil {
			g.usage(m, bytes)
		}
	}
	// seqs, not history: a stopped version's history is deleted at once, and a reference
	// kept here would keep its whole runtime reachable.
	for m := range g.seqs {
		if !alive[m] {
			delete(g.history, m)
			delete(g.seqs, m)
		}
	}
}

// suspect is the largest version whose last growthSamples measurements each grew, holding at
// least minBytes, or whose last measurement was too large to finish. A truncated measurement
// counts only what the walk reached in its time: on a loaded machine that can be far below
// minBytes for a runtime holding hundreds of MB, so truncation alone qualifies.
func suspect[K comparable](history map[K][]memSample, minBytes int64) (K, bool) {
	var best K
	var bestBytes int64
	found := false
	for k, h := range history {
		last := h[len(h)-1]
		if !last.truncated && (last.bytes < minBytes || !growing(h)) {
			continue
		}
		if !found || last.bytes > bestBytes {
			best, bestBytes, found = k, last.bytes, true
		}
	}
	return best, found
}

func growing(h []memSample) bool {
	if len(h) < growthSamples {
		return false
	}
	for i := 1; i < len(h); i++ {
		if h[i].bytes <= h[i-1].bytes {
			return false
		}
	}
	return true
}

// released is closed once v has closed its runtimes and is done.
func (v *version) released() <-chan struct{} { return v.finished }

// requestMemory asks each runtime of v for a measurement after its next call.
func (v *version) requestMemory() {
	for _, s := range v.runtimes() {
		s.RequestMemoryUsage()
	}
}

// memory sums v's runtimes' latest measurements; seq changes whenever one of them does.
func (v *version) memory() (bytes int64, seq uint64, truncated bool) {
	for _, s := range v.runtimes() {
		m := s.MemoryUsage()
		bytes, seq, truncated = bytes+m.Bytes, seq+m.Seq, truncated || m.Truncated
	}
	return bytes, seq, truncated
}

// runtimes are v's Scripts: the worker's, the index stage's and the reconcile workers'.
func (v *version) runtimes() []*scripting.Script {
	out := []*scripting.Script{v.script}
	if v.indexer != nil {
		out = append(out, v.indexer)
	}
	if v.reconciler != nil {
		out = append(out, v.reconciler.scripts...)
	}
	return out
}
