package gcpace

import (
	"log/slog"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Pacer moves garbage collection out of reloads. A reload replays the whole cache to the
// new version and allocates tens of MB doing it, so on a large cache it is what fills the heap
// up to the garbage collector's goal: left to itself, the runtime starts a cycle in the middle
// of the next reload or the one after. That cycle marks the whole informer cache while the
// reload needs both CPUs, and makes the reload's goroutines pay mark assists: it is every one
// of the slowest reloads (docs/benchmarks.md). So once a reload has swapped and the old
// version has drained, when the runner is usually idle, the pacer starts a cycle itself
// if less than two reloads' worth of headroom is left; and once when the initial sync is
// done, so the first reload does not meet the initial lists' garbage.
//
// It costs cycles started somewhat early: while a script is reloaded over and over, cycles
// come about half again as often. Between reloads nothing changes: event handling keeps the
// runtime's own pacing.
//
// While a load runs, the pacer also lifts the runtime's GC percent (lift) so that one
// load's worth of allocation, and half again, fits below the goal: without it a load that
// allocates more than the live heap (a reload of a large cache with index functions does)
// starts a cycle midway however well the cycle before was placed. The percent goes back once
// the load is over and, for a reload, the version it replaced has drained; settle then
// collects what the load left, at idle time. The heap can therefore grow to the live heap
// plus 1.5 loads during a load, where the runtime would have held it near twice the live heap.
type Pacer struct {
	read    func() reading // runtime/metrics; replaced in tests
	collect func()         // runtime.GC; replaced in tests
	logger  *slog.Logger
	enabled bool // Config.PaceGC

	// perLoad is the most any of the last recentLoads completed loads allocated: scripts
	// reloaded in turn, or one whose index functions change, allocate unevenly, and sizing
	// for the last load alone would leave the next, larger one short.
	perLoad atomic.Uint64
	loadsMu sync.Mutex
	loads   [recentLoads]uint64 // bytes of the last loads, a ring
	nLoads  int
	busy    atomic.Bool // a collection started here is running

	setPercent func(int) int // debug.SetGCPercent; replaced in tests
	liftMu     sync.Mutex
	lifts      int // loads holding a lift
	saved      int // the GC percent to put back when the last lift ends
}

// headroomLoads is how many loads' worth of allocation must fit below the goal for the
// pacer to leave the runtime alone.
const headroomLoads = 2

// New returns a pacer; enabled is Config.PaceGC: a disabled one never collects nor lifts.
func New(logger *slog.Logger, enabled bool) *Pacer {
	return &Pacer{read: readHeap, collect: runtime.GC, setPercent: debug.SetGCPercent, logger: logger, enabled: enabled}
}

// due reports whether fewer than headroomLoads loads of perLoad bytes fit below the goal.
func (r reading) due(perLoad uint64) bool {
	return !r.off && perLoad > 0 && r.inUse+headroomLoads*perLoad >= r.goal
}

// Mark is the allocation count a load starts from, for loaded.
func (c *Pacer) Mark() uint64 { return c.read().allocs }

// recentLoads is how many completed loads perLoad looks back on.
const recentLoads = 4

// Loaded records how much a load that started at mark allocated until it synced.
func (c *Pacer) Loaded(mark uint64) {
	c.loadsMu.Lock()
	defer c.loadsMu.Unlock()
	c.loads[c.nLoads%recentLoads] = c.read().allocs - mark
	c.nLoads++
	c.perLoad.Store(slices.Max(c.loads[:]))
}

// maxLiftPercent bounds a lifted GC percent: the heap never grows past 9 times the live heap
// for a load, whatever a load allocated before.
const maxLiftPercent = 800

// liftPercent is the GC percent that makes the goal hold the heap in use plus 1.5 loads of
// perLoad bytes over r.live, if that is above the percent in force; 0 when no lift is needed
// or possible.
func (r reading) liftPercent(perLoad uint64) int {
	if r.off || perLoad == 0 || r.live == 0 {
		return 0
	}
	need := r.inUse + perLoad + perLoad/2
	if need <= r.live {
		return 0
	}
	p := min(int((need-r.live)*100/r.live)+1, maxLiftPercent)
	if uint64(p) <= r.gogc {
		return 0
	}
	return p
}

// Lift raises the GC percent for a load that is starting, when the last load's allocation
// would not fit below the goal; the function returned ends the lift (safe to call more than
// once), and the percent goes back when no lift is left.
func (c *Pacer) Lift() func() {
	if !c.enabled {
		return func() {}
	}
	r := c.read()
	p := r.liftPercent(c.perLoad.Load())
	if p == 0 {
		return func() {}
	}
	c.liftMu.Lock()
	if c.lifts == 0 {
		c.saved = int(r.gogc)
	}
	c.lifts++
	if old := c.setPercent(p); old > p {
		c.setPercent(old) // a lift already in force is higher
	}
	c.liftMu.Unlock()
	var once sync.Once
	return func() { once.Do(c.unlift) }
}

// unlift ends one lift; the last one puts the user's percent back.
func (c *Pacer) unlift() {
	c.liftMu.Lock()
	defer c.liftMu.Unlock()
	if c.lifts--; c.lifts == 0 {
		c.setPercent(c.saved)
	}
}

// Settle collects now if the next load would otherwise start a cycle midway; it returns when
// that collection is done. Called after a version retired by a reload or an unload drained.
func (c *Pacer) Settle() {
	if !c.enabled {
		return
	}
	if r := c.read(); r.due(c.perLoad.Load()) {
		c.run("after a reload", r)
	}
}

// InitialSynced collects the garbage of the initial lists once every script has synced, so
// the first reload starts with the whole headroom.
func (c *Pacer) InitialSynced() {
	if !c.enabled {
		return
	}
	if r := c.read(); !r.off {
		c.run("after the initial sync", r)
	}
}

// run collects unless a collection started here is already running.
func (c *Pacer) run(when string, r reading) {
	if !c.busy.CompareAndSwap(false, true) {
		return
	}
	defer c.busy.Store(false)
	start := time.Now()
	c.collect()
	c.logger.Debug("collected garbage "+when, "heap_in_use", r.inUse, "heap_goal", r.goal, "took", time.Since(start).Round(time.Millisecond).String())
}
