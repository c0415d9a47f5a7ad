package engine

import (
	"context"
	"time"

	"github.com/jsinformer/jsinformer/engine/internal/memguard"
	"github.com/jsinformer/jsinformer/plugins"
	"github.com/jsinformer/jsinformer/status"
)

// memoryStop is the guard's verdict on a version, carried to the loader.
type memoryStop struct {
	v     *loaded
	bytes int64
}

// startMemoryGuard starts the guard (package engine/internal/memguard) when a limit is set;
// the returned func stops and joins it.
func (e *Engine) startMemoryGuard(ctx context.Context) (join func()) {
	if e.cfg.MemoryLimit <= 0 {
		return func() {}
	}
	cfg := memguard.Config{
		Limit: e.cfg.MemoryLimit, Interval: e.cfg.MemoryCheckInterval, Logger: e.logger, Now: time.Now,
		Serving: e.needs.serving,
		Stop: func(ctx context.Context, m memguard.Version, bytes int64) {
			select {
			case e.memoryStops <- memoryStop{v: m.(*loaded), bytes: bytes}:
			case <-ctx.Done():
			}
		},
		Usage: func(m memguard.Version, bytes int64) {
			e.stats.MemoryMeasured(m.(*loaded).ver.Script(), bytes)
			e.memory.Store(m.(*loaded).ver.Script(), bytes)
		},
	}
	if heap := e.cfg.heap; heap != nil { // a test's heap: no garbage, nothing to collect
		cfg.Read = func() memguard.Reading { h := uint64(heap()); return memguard.Reading{Live: h, InUse: h} }
		cfg.Collect = func() {}
	}
	e.logger.Info("memory guard on", "limit_bytes", e.cfg.MemoryLimit, "check_every", e.cfg.MemoryCheckInterval.String())
	return memguard.New(cfg).Start(ctx)
}

// onMemoryStop stops a version the guard found growing, if it still serves; its script stays
// stopped until its file changes (stoppedForMemory). The stop is immediate: the running call
// is interrupted and the version's queued events and reconcile keys are dropped (counted),
// since each of them could grow it further.
func (e *Engine) onMemoryStop(s memoryStop) {
	v := s.v
	p := e.plugins[v.ver.Script()]
	if p == nil || p.current != v {
		return // replaced or unloaded meanwhile: its memory is going anyway
	}
	p.current = nil
	if p.pending == nil {
		delete(e.plugins, v.ver.Script())
	} else {
		p.stopped = v
	}
	e.publishAdmission(v.ver.Script(), true)
	events, keys := e.drop(v)
	e.stopped[v.ver.Script()] = v.ver.Hash()
	v.ver.Logger().Error("script stopped: its memory kept growing near the memory limit; it stays stopped until its file changes",
		"memory_bytes", s.bytes, "limit_bytes", e.cfg.MemoryLimit, "dropped_events", events, "dropped_keys", keys)
	e.book.Stopped(v.ver.Script(), v.ver.Hash(), s.bytes)
	e.book.Loaded(v.ver.Script(), status.LoadStatus{Hash: v.ver.Hash(), Result: status.LoadStopped})
	e.stats.MemoryStopped(v.ver.Script(), events+keys)
}

// stoppedForMemory reports whether src is the content the guard stopped, which stays stopped;
// any other content of that file, or its removal, lifts the stop.
func (e *Engine) stoppedForMemory(src plugins.Source) bool {
	hash, ok := e.stopped[src.Name]
	if ok && hash == src.Hash {
		e.logger.Warn("script content is the one the memory guard stopped; not loaded", "script", src.Name, "version", src.Hash)
		return true
	}
	e.liftStop(src.Name)
	return false
}

func (e *Engine) liftStop(name string) {
	if _, ok := e.stopped[name]; ok {
		delete(e.stopped, name)
		e.book.Stopped(name, "", 0)
		e.stats.StopLifted(name)
	}
}

// ScriptMemory is each script's runtimes' memory as the memory guard last measured it. The
// guard measures only while the heap is above half the memory limit, so a script is absent
// before that. Safe for concurrent use.
func (e *Engine) ScriptMemory() map[string]int64 {
	out := map[string]int64{}
	e.memory.Range(func(k, v any) bool {
		out[k.(string)] = v.(int64)
		return true
	})
	return out
}
