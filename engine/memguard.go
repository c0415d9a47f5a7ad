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
// internal/heapsize). Once the heap is above actShare, the guard stops the largest version
// whose measurements grew over its last growthSamples (suspect), if it holds at least
// minShare of the limit. A version is measured only when it runs, which is also the only time
// it can grow.

const (
	watchShare    = 0.5
	actShare      = 0.8
	minShare      = 0.1
	growthSamples = 3
	// quietChecks is how many checks the guard waits after a stop, for the memory to be freed.
	quietChecks = 3
)

// measured is what the guard needs of a version: its runtimes' memory, summed.
type measured interface {
	requestMemory()
	memory() (bytes int64, seq uint64, truncated bool)
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
	heap     func() int64 // the live heap
	serving  func() []measured
	stop     func(ctx context.Context, m measured, bytes int64)
	usage    func(m measured, bytes int64) // reports a version's latest measurement

	history map[measured][]memSample
	seqs    map[measured]uint64
	quiet   int  // checks left before the guard acts again
	warned  bool // "no growing script" said for this episode above actShare
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
	live := g.heap()
	if float64(live) < watchShare*float64(g.limit) {
		clear(g.history)
		clear(g.seqs) // holds no version past the episode: a stopped one must be collectable
		g.warned = false
		return
	}
	serving := g.serving()
	g.record(serving)
	for _, m := range serving {
		m.requestMemory()
	}
	if g.quiet > 0 {
		g.quiet--
		return
	}
	if float64(live) < actShare*float64(g.limit) {
		g.warned = false
		return
	}
	g.act(ctx, live)
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

func (g *memoryGuard) act(ctx context.Context, live int64) {
	m, ok := suspect(g.history, int64(minShare*float64(g.limit)))
	if !ok {
		if !g.warned {
			g.warned = true
			g.logger.Warn("memory near its limit, and no script's memory keeps growing",
				"heap_bytes", live, "limit_bytes", g.limit)
		}
		return
	}
	h := g.history[m]
	delete(g.history, m)
	g.quiet = quietChecks
	g.stop(ctx, m, h[len(h)-1].bytes)
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

// liveHeap is the heap the last garbage collection left live.
func liveHeap() int64 { return int64(readHeap().live) }

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
