package engine

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/jsinformer/jsinformer/store"
)

// Retention of the stores of deleted scripts (store.Store.Sweep). The loader records which
// scripts are in the folder and which shared namespaces their loaded versions declare; once
// the runner is ready (it has seen every script), a goroutine sweeps every
// store.SweepEvery(retention): stores with an owner are kept, the others are marked and, once
// marked for the retention, deleted. With --leader-elect only the leader sweeps (and its
// writes are fenced like the scripts').

// storeOwners is what keeps stores alive: the scripts in the folder (a script that fails to
// load still owns its store) and the shared namespaces their last loaded versions declare.
// Written by the loader, read by the sweeper.
type storeOwners struct {
	mu      sync.Mutex
	scripts map[string][]string // script name → shared namespaces it declares
}

// present records that the folder holds script, keeping what it last declared.
func (o *storeOwners) present(script string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.scripts == nil {
		o.scripts = map[string][]string{}
	}
	if _, ok := o.scripts[script]; !ok {
		o.scripts[script] = nil
	}
}

// declare records the shared namespaces script's newly loaded version declares.
func (o *storeOwners) declare(script string, shared []string) {
	o.present(script)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.scripts[script] = slices.Clone(shared)
}

func (o *storeOwners) remove(script string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.scripts, script)
}

// live is the set of store IDs with an owner now.
func (o *storeOwners) live() func(id string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	ids := map[string]bool{}
	for script, shared := range o.scripts {
		ids[store.ScriptID(script)] = true
		for _, name := range shared {
			ids[store.SharedID(name)] = true
		}
	}
	return func(id string) bool { return ids[id] }
}

// startStoreSweeper starts the sweeping goroutine, which the returned join stops and waits
// for (Run owns it); nothing without a store or with retention 0.
func (e *Engine) startStoreSweeper(ctx context.Context) (join func()) {
	if e.store == nil || e.cfg.Store == nil || e.cfg.Store.Retention <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.sweepStores(ctx, e.cfg.Store.Retention)
	}()
	return func() { cancel(); <-done }
}

func (e *Engine) sweepStores(ctx context.Context, retention time.Duration) {
	tick := time.NewTicker(store.SweepEvery(retention))
	defer tick.Stop()
	log := e.logger.With("component", "store")
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !e.readyOnce.Load() || (e.lead != nil && !e.lead.Leading()) {
			continue
		}
		res, err := e.store.Sweep(ctx, e.storeOwners.live(), retention)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("store retention sweep failed", "error", err.Error())
		case res != store.SweepResult{}:
			log.Info("store retention sweep", "marked", res.Marked, "unmarked", res.Unmarked, "deleted", res.Deleted,
				"retention", retention.String())
		}
	}
}
