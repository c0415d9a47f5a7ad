package memguard

import (
	"context"
	"runtime"
	"runtime/metrics"
	"sync"
)

// Start runs the guard on a goroutine of its own until ctx ends or join is called; join
// stops it and returns once it has returned. The caller owns that goroutine through join.
func (g *Guard) Start(ctx context.Context) (join func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { g.Run(ctx) })
	return func() {
		cancel()
		wg.Wait()
	}
}

// processHeap is Config.Read's default: the process's heap from runtime/metrics.
func processHeap() Reading {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return Reading{Live: s[0].Value.Uint64(), InUse: s[1].Value.Uint64(), Cycles: s[2].Value.Uint64()}
}

// defaults fills Read and Collect when cfg leaves them nil: the process's heap and runtime.GC.
func (cfg *Config) defaults() {
	if cfg.Read == nil {
		cfg.Read = processHeap
	}
	if cfg.Collect == nil {
		cfg.Collect = runtime.GC
	}
}
