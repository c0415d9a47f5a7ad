package trace

import (
	"context"

	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/scripting"
)

// tapStore is the ctx.store of a tapped Script: every call is noted in the open call with its
// key, size and version; the value only when the key is readable (StoreEntry.Readable,
// StoreSetOptions.Readable), so that a value the script did not mark never reaches a trace,
// explain or the debug page.
type tapStore struct {
	next   scripting.Store
	tap    *Tap
	shared string
}

var (
	_ scripting.Store        = tapStore{}
	_ scripting.SharedStores = tapStore{}
)

// Shared taps the shared namespace's store too; nil-safe when next has none.
func (s tapStore) Shared(name string) scripting.Store {
	sharer, ok := s.next.(scripting.SharedStores)
	if !ok {
		return nil
	}
	return tapStore{next: sharer.Shared(name), tap: s.tap, shared: name}
}

func (s tapStore) Get(ctx context.Context, key string) (scripting.StoreEntry, bool, error) {
	e, ok, err := s.next.Get(ctx, key)
	op := s.op("get", key, err)
	if ok {
		op.Found, op.Bytes, op.Version = true, len(e.Value), e.Version
		op.Value = readable(e.Readable, e.Value)
	}
	s.tap.addStore(op)
	return e, ok, err
}

func (s tapStore) Set(ctx context.Context, key string, value []byte, opts scripting.StoreSetOptions) (int64, error) {
	v, err := s.next.Set(ctx, key, value, opts)
	op := s.op("set", key, err)
	op.Bytes, op.Version, op.Value = len(value), v, readable(opts.Readable, value)
	s.tap.addStore(op)
	return v, err
}

func (s tapStore) Delete(ctx context.Context, key string, expect *int64) (bool, error) {
	existed, err := s.next.Delete(ctx, key, expect)
	op := s.op("delete", key, err)
	op.Found = existed
	s.tap.addStore(op)
	return existed, err
}

func (s tapStore) List(ctx context.Context, prefix string) ([]scripting.StoreEntry, error) {
	entries, err := s.next.List(ctx, prefix)
	op := s.op("list", prefix, err)
	op.Count = len(entries)
	for _, e := range entries {
		op.Bytes += len(e.Value)
	}
	s.tap.addStore(op)
	return entries, err
}

func (s tapStore) op(name, key string, err error) inspection.StoreOp {
	op := inspection.StoreOp{Op: name, Shared: s.shared, Key: key}
	if err != nil {
		op.Error = err.Error() // the store's errors name keys and sizes, never values
	}
	return op
}

// readable is value as a StoreOp shows it: only when readable, cut at StoreValueChars.
func readable(ok bool, value []byte) string {
	if !ok {
		return ""
	}
	if len(value) > inspection.StoreValueChars {
		return string(value[:inspection.StoreValueChars]) + "…"
	}
	return string(value)
}

// addStore notes a ctx.store call of the open call (counted with the writes' limit).
func (t *Tap) addStore(op inspection.StoreOp) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur == nil {
		return
	}
	if len(t.cur.Store) >= inspection.TraceWritesPerCall {
		t.cur.Truncated++
		return
	}
	t.cur.Store = append(t.cur.Store, op)
}
