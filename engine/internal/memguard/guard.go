package memguard

import (
	"context"
	"log/slog"
	"time"
)

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

// Version is what the guard needs of a script version: its runtimes' memory, summed. The
// engine's loader implements it for each version it holds (its loaded, passing the
// measurement on to the version's runtimes); the guard compares them by identity.
type Version interface {
	// RequestMemory asks each runtime for a measurement after its next call.
	RequestMemory()
	// Memory sums the runtimes' latest measurements; seq changes whenever one of them does.
	Memory() (bytes int64, seq uint64, truncated bool)
	// Released is closed once the version has closed its runtimes, after a stop.
	Released() <-chan struct{}
}

// Reading is what the guard needs of the runtime's heap figures, in bytes.
type Reading struct {
	Live   uint64 // what the last collection left live
	InUse  uint64 // live and not yet swept objects: an upper bound of the live heap now
	Cycles uint64 // collections completed: Live changes only when this does
}

// Config is what the guard runs on. Now, Serving and Stop are required; Read and Collect
// default to the process's heap and runtime.GC.
type Config struct {
	Limit    int64         // bytes
	Interval time.Duration // between two checks
	Logger   *slog.Logger
	Read     func() Reading // the runtime's heap figures
	Collect  func()         // a full collection, which refreshes the live figure
	Now      func() time.Time
	// Serving lists the versions that serve; called on the guard's goroutine at each check
	// above watchShare of the limit.
	Serving func() []Version
	// Stop hands the verdict to the owner of the versions, which stops v; it may block until
	// ctx is done.
	Stop func(ctx context.Context, v Version, bytes int64)
	// Usage, if set, reports a version's latest measurement.
	Usage func(v Version, bytes int64)
}

// memSample is one measurement of a version.
type memSample struct {
	bytes     int64
	truncated bool
}

// Guard checks the heap every interval. Run's caller owns its goroutine; the guard hands its
// verdicts to Config.Stop.
type Guard struct {
	limit    int64
	interval time.Duration
	logger   *slog.Logger
	read     func() Reading
	collect  func()
	now      func() time.Time
	serving  func() []Version
	stop     func(ctx context.Context, v Version, bytes int64)
	usage    func(v Version, bytes int64)

	history map[Version][]memSample
	seqs    map[Version]uint64
	trend   heapTrend
	warned  bool // "no growing script" said for this episode above actShare
	// After a stop: the checks since, and the stopped version's released (the channel only:
	// the version itself must be collectable). Until a collection after the version released
	// its runtimes, the live figure counts them, so the guard refreshes before acting again.
	stopping  bool
	sinceStop int
	stopped   <-chan struct{}
}

// New returns a guard on cfg; it does nothing until Run.
func New(cfg Config) *Guard {
	cfg.defaults()
	return &Guard{
		limit: cfg.Limit, interval: cfg.Interval, logger: cfg.Logger,
		read: cfg.Read, collect: cfg.Collect, now: cfg.Now,
		serving: cfg.Serving, stop: cfg.Stop, usage: cfg.Usage,
		history: map[Version][]memSample{}, seqs: map[Version]uint64{},
	}
}

// Run checks the heap every interval until ctx is done.
func (g *Guard) Run(ctx context.Context) {
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

func (g *Guard) check(ctx context.Context) {
	r := g.read()
	g.trend.observe(r, g.now())
	if float64(r.InUse) < watchShare*float64(g.limit) {
		clear(g.history)
		clear(g.seqs) // holds no version past the episode: a stopped one must be collectable
		g.warned, g.stopping, g.stopped = false, false, nil
		return
	}
	serving := g.serving()
	g.record(serving)
	for _, m := range serving {
		m.RequestMemory()
	}
	if g.waiting() {
		return
	}
	at := g.threshold()
	if int64(r.InUse) < at {
		g.warned = false
		return
	}
	m, found := suspect(g.history, int64(minShare*float64(g.limit)))
	live := int64(r.Live)
	stale := float64(int64(r.InUse)-live) >= staleShare*float64(g.limit)
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
	g.stopping, g.sinceStop, g.stopped = true, 0, m.Released()
	g.stop(ctx, m, h[len(h)-1].bytes)
}

// waiting reports whether the guard holds off after a stop: for quietChecks checks, and until
// the stopped version has released its runtimes, for at most maxQuietChecks (a runtime stuck
// in a call is abandoned, not released).
func (g *Guard) waiting() bool {
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
func (g *Guard) refresh() int64 {
	start := g.now()
	g.collect()
	took := g.now().Sub(start)
	g.trend.collected(took)
	r := g.read()
	g.trend.observe(r, g.now())
	g.logger.Debug("memory guard collected garbage to read the live heap", "heap_bytes", r.Live,
		"limit_bytes", g.limit, "took", took.Round(time.Millisecond).String())
	return int64(r.Live)
}

// threshold is the live heap at which the guard acts: actShare of the limit, or less when the
// live heap grows fast enough to pass the limit before the guard's next decision.
func (g *Guard) threshold() int64 {
	return g.trend.threshold(g.limit, g.interval)
}

// warnOnce says, once per episode above actShare, that no script is to blame.
func (g *Guard) warnOnce(live int64) {
	if g.warned || float64(live) < actShare*float64(g.limit) {
		return
	}
	g.warned = true
	g.logger.Warn("memory near its limit, and no script's memory keeps growing",
		"heap_bytes", live, "limit_bytes", g.limit)
}

// record takes each version's new measurement, if it made one, and forgets versions gone.
func (g *Guard) record(serving []Version) {
	alive := make(map[Version]bool, len(serving))
	for _, m := range serving {
		alive[m] = true
		bytes, seq, truncated := m.Memory()
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
