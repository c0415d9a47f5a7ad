package jstest

import (
	"github.com/dop251/goja"

	"github.com/jsinformer/jsinformer/store"
)

// h.outbox: the plugin's outbox (ctx.outbox.send, outbox.deliver), kept in the harness's
// in-memory store with the runner's semantics, for a test to read each message's state.

// outboxObject is h.outbox: list() and get(key).
func (h *harness) outboxObject(plugin string) goja.Value {
	box := h.off.Store().Outbox(plugin, store.OutboxPolicy{})
	o := h.f.rt.NewObject()
	_ = o.Set("list", func() goja.Value {
		entries, err := box.List(h.f.ctx)
		h.storeCheck("h.outbox.list", err)
		out := make([]any, len(entries))
		for i, e := range entries {
			out[i] = outboxEntry(e)
		}
		return h.f.toJS(out)
	})
	_ = o.Set("get", func(key string) goja.Value {
		e, ok, err := box.Get(h.f.ctx, key)
		h.storeCheck("h.outbox.get", err)
		if !ok {
			return goja.Null()
		}
		return h.f.toJS(outboxEntry(e))
	})
	return o
}

// outboxEntry is a record as h.outbox shows it: {key, state, message, attempts, lastError,
// interrupted}.
func outboxEntry(e store.OutboxEntry) map[string]any {
	return map[string]any{"key": e.Key, "state": e.State, "message": e.Message,
		"attempts": e.Attempts, "lastError": e.LastError, "interrupted": e.Interrupted}
}
