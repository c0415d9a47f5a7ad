package jstest

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/dop251/goja"

	"github.com/jsinformer/jsinformer/store"
)

// h.store and harness()'s store option: the plugin's ctx.store, in memory with the runner's
// semantics (offline.Harness.Store), for a test to seed before the plugin starts and to read
// or change during the test. Scoped to the plugin, as the plugin's own ctx.store is.

// seedStore sets the keys of the store option, in key order, before the plugin loads.
func (h *harness) seedStore(plugin string, keys map[string]any) error {
	sc := h.off.Store().Scope(plugin)
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range keys {
			if !yield(k) {
				return
			}
		}
	}) {
		value, err := json.Marshal(keys[k])
		if err != nil {
			return fmt.Errorf("harness: store %q: %w", k, err)
		}
		if _, err := sc.Set(h.f.ctx, k, value, store.SetOptions{}); err != nil {
			return fmt.Errorf("harness: store: %w", err)
		}
	}
	return nil
}

// storeObject is h.store: get, set, delete and list on the plugin's store, and shared(name)
// for a shared namespace's (any name: the test seeds and reads what scripts declare).
func (h *harness) storeObject(plugin string) goja.Value {
	o := h.scopeObject(h.off.Store().Scope(plugin))
	_ = o.Set("shared", func(name string) goja.Value {
		h.storeCheck("h.store.shared", store.ValidSharedName(name))
		shared := h.scopeObject(h.off.Store().Shared(name))
		_ = shared.Set("name", name)
		return shared
	})
	return o
}

// scopeObject is get, set, delete and list on sc.
func (h *harness) scopeObject(sc *store.Scope) *goja.Object {
	o := h.f.rt.NewObject()
	_ = o.Set("get", func(key string) goja.Value {
		e, ok, err := sc.Get(h.f.ctx, key)
		h.storeCheck("h.store.get", err)
		if !ok {
			return goja.Null()
		}
		return h.f.toJS(storeEntry(e))
	})
	_ = o.Set("list", func(prefix string) goja.Value {
		entries, err := sc.List(h.f.ctx, prefix)
		h.storeCheck("h.store.list", err)
		out := make([]any, len(entries))
		for i, e := range entries {
			out[i] = storeEntry(e)
		}
		return h.f.toJS(out)
	})
	_ = o.Set("set", func(key string, value, options goja.Value) int64 {
		data, err := h.f.toGo(value)
		h.storeCheck("h.store.set", err)
		raw, err := json.Marshal(data)
		h.storeCheck("h.store.set", err)
		opts := h.storeOptions("h.store.set", options)
		version, err := sc.Set(h.f.ctx, key, raw, opts)
		h.storeCheck("h.store.set", err)
		return version
	})
	_ = o.Set("delete", func(key string, options goja.Value) bool {
		opts := h.storeOptions("h.store.delete", options)
		existed, err := sc.Delete(h.f.ctx, key, store.DeleteOptions{Expect: opts.Expect})
		h.storeCheck("h.store.delete", err)
		return existed
	})
	return o
}

func (h *harness) storeCheck(fn string, err error) {
	if err != nil {
		h.f.throw(fmt.Errorf("%s: %w", fn, err))
	}
}

// storeOptions reads {ttl, version} as ctx.store.set does: ttl a duration string or
// milliseconds, version the key's expected version (0: absent).
func (h *harness) storeOptions(fn string, v goja.Value) store.SetOptions {
	var raw struct {
		TTL     any    `json:"ttl"`
		Version *int64 `json:"version"`
	}
	if !missing(v) {
		data, err := h.f.toGo(v)
		h.storeCheck(fn, err)
		h.storeCheck(fn, decodeStrict(data, &raw, "ttl", "version"))
	}
	opts := store.SetOptions{Expect: raw.Version}
	switch ttl := raw.TTL.(type) {
	case nil:
	case string:
		d, err := time.ParseDuration(ttl)
		h.storeCheck(fn+": ttl", err)
		opts.TTL = d
	case int64:
		opts.TTL = time.Duration(ttl) * time.Millisecond
	case float64:
		opts.TTL = time.Duration(ttl * float64(time.Millisecond))
	default:
		h.storeCheck(fn, fmt.Errorf("ttl must be a duration string or milliseconds, got %T", ttl))
	}
	return opts
}

// storeEntry is e as ctx.store.get returns it.
func storeEntry(e store.Entry) map[string]any {
	out := map[string]any{"key": e.Key, "value": e.Value, "version": e.Version, "expiresAt": nil}
	if !e.Expires.IsZero() {
		out["expiresAt"] = e.Expires.UnixMilli()
	}
	return out
}
