package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/store"
)

// initStore builds ctx.store's backend (package store) when Config.Store asks for one, on
// restCfg, the client the scripts' writes go through, so that the store's writes are fenced
// like theirs: a runner that lost its Lease (or a shard member its own) writes nothing.
func (e *Engine) initStore(restCfg *rest.Config) error {
	if e.cfg.Store == nil {
		return nil
	}
	cs, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("create store client: %w", err)
	}
	if e.store, err = store.New(cs.CoreV1(), *e.cfg.Store, e.cfg.Logger.With("component", "store")); err != nil {
		return fmt.Errorf("create store: %w", err)
	}
	return nil
}

// scriptStore is the store of the script named name as ctx.store sees it; nil without a store.
func (e *Engine) scriptStore(name string) scripting.Store {
	if e.store == nil {
		return nil
	}
	return storeScope{st: e.store, sc: e.store.Scope(name)}
}

// closeStore waits for the store's writes in flight; after the scripts stopped, so no new
// write comes.
func (e *Engine) closeStore() {
	if e.store != nil {
		e.store.Close()
	}
}

// storeScope adapts a *store.Scope to scripting.Store, and st's shared namespaces to
// scripting.SharedStores (scripting checks that the script declared the name).
type storeScope struct {
	st *store.Store
	sc *store.Scope
}

func (s storeScope) Shared(name string) scripting.Store {
	return storeScope{st: s.st, sc: s.st.Shared(name)}
}

func (s storeScope) Get(ctx context.Context, key string) (scripting.StoreEntry, bool, error) {
	e, ok, err := s.sc.Get(ctx, key)
	return toScripting(e), ok, err
}

func (s storeScope) Set(ctx context.Context, key string, value []byte, opts scripting.StoreSetOptions) (int64, error) {
	return s.sc.Set(ctx, key, json.RawMessage(value), store.SetOptions{TTL: opts.TTL, Expect: opts.Expect, Readable: opts.Readable})
}

func (s storeScope) Delete(ctx context.Context, key string, expect *int64) (bool, error) {
	return s.sc.Delete(ctx, key, store.DeleteOptions{Expect: expect})
}

func (s storeScope) List(ctx context.Context, prefix string) ([]scripting.StoreEntry, error) {
	entries, err := s.sc.List(ctx, prefix)
	out := make([]scripting.StoreEntry, len(entries))
	for i, e := range entries {
		out[i] = toScripting(e)
	}
	return out, err
}

func toScripting(e store.Entry) scripting.StoreEntry {
	return scripting.StoreEntry{Key: e.Key, Value: e.Value, Version: e.Version, Expires: e.Expires, Readable: e.Readable}
}
