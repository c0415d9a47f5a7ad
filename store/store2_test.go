package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/store"
)

// fakeClock is a clock the test moves.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// A key with a TTL reads as present until it expires, then as absent (get and list), and the
// next write to its shard removes it from the ConfigMap; a Set without TTL keeps the key.
func TestTTL(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	clock := &fakeClock{}
	clock.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	s, _ := newStore(t, store.Options{Namespace: ns, Shards: 1, Now: clock.now})
	sc, ctx := s.Scope("ttl"), t.Context()
	if _, err := sc.Set(ctx, "short", json.RawMessage(`1`), store.SetOptions{TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	mustSet(t, sc, "forever", `2`)
	e, ok, err := sc.Get(ctx, "short")
	if err != nil || !ok || !e.Expires.Equal(clock.now().Add(time.Minute).Truncate(time.Millisecond)) {
		t.Fatalf("get before expiry = %+v %v %v; want present, expiring in a minute", e, ok, err)
	}
	clock.advance(61 * time.Second)
	if _, ok, err := sc.Get(ctx, "short"); ok || err != nil {
		t.Fatalf("get after expiry = %v, %v; want absent", ok, err)
	}
	if list, _ := sc.List(ctx, ""); len(list) != 1 || list[0].Key != "forever" {
		t.Fatalf("list after expiry = %+v; want only forever", list)
	}
	if !strings.Contains(dataOf(configMaps(t, ns))[0], `"short"`) {
		t.Fatal("the expired key left its ConfigMap before a write")
	}
	mustSet(t, sc, "other", `3`)
	if strings.Contains(dataOf(configMaps(t, ns))[0], `"short"`) {
		t.Fatal("the expired key is still in the ConfigMap after the shard's next write")
	}
}

// Each limit refuses the write that would exceed it with a LimitError naming it (413), and
// only that write: the others of the same batch apply, and nothing stays queued.
func TestLimits(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	s, _ := newStore(t, store.Options{Namespace: ns, Shards: 2, Window: 50 * time.Millisecond,
		Limits: store.Limits{MaxKeyBytes: 10, MaxValueBytes: 20, MaxKeys: 3, MaxTotalBytes: 25}})
	sc, ctx := s.Scope("lim"), t.Context()
	expectLimit(t, "max-key-bytes", func() error {
		_, err := sc.Set(ctx, strings.Repeat("k", 11), json.RawMessage(`1`), store.SetOptions{})
		return err
	})
	expectLimit(t, "max-value-bytes", func() error {
		_, err := sc.Set(ctx, "k", json.RawMessage(`"`+strings.Repeat("v", 19)+`"`), store.SetOptions{})
		return err
	})
	if _, err := sc.Set(ctx, "k", json.RawMessage(`{`), store.SetOptions{}); err == nil {
		t.Fatal("a value that is not JSON was stored")
	}
	// Four keys in one batch: three fit, the fourth exceeds max-keys.
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { _, errs[i] = sc.Set(ctx, fmt.Sprint("k", i), json.RawMessage(`1`), store.SetOptions{}) })
	}
	wg.Wait()
	var failed int
	for _, err := range errs {
		if err != nil {
			failed++
			expectLimit(t, "max-keys", func() error { return err })
		}
	}
	if list, _ := sc.List(ctx, ""); failed != 1 || len(list) != 3 {
		t.Fatalf("%d writes failed, %d keys stored; want 1 and 3", failed, len(list))
	}
	keys, _ := sc.List(ctx, "")
	mustSet(t, sc, keys[0].Key, `2`) // overwriting a key adds none
	expectLimit(t, "max-total-bytes", func() error {
		_, err := sc.Set(ctx, keys[1].Key, json.RawMessage(`"`+strings.Repeat("v", 18)+`"`), store.SetOptions{})
		return err
	})
	if _, err := sc.Delete(ctx, keys[2].Key, store.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	mustSet(t, sc, "new", `1`) // a delete makes room
}

func expectLimit(t *testing.T, limit string, f func() error) {
	t.Helper()
	err := f()
	var le *store.LimitError
	if !errors.As(err, &le) || le.Limit != limit || le.Status().Code != 413 || !strings.Contains(err.Error(), limit) {
		t.Fatalf("error = %v; want a LimitError for %s", err, limit)
	}
}

// A store larger than one ConfigMap may hold (1 MiB) is spread over its shards, every value
// intact.
func TestShardingBeyondOneObject(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	s, _ := newStore(t, store.Options{Namespace: ns, Shards: 8})
	sc, ctx := s.Scope("big"), t.Context()
	const n, size = 40, 60 << 10
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			v := json.RawMessage(fmt.Sprintf("%q", strings.Repeat(fmt.Sprint(i%10), size-2)))
			if _, err := sc.Set(ctx, fmt.Sprint("key-", i), v, store.SetOptions{}); err != nil {
				t.Errorf("set %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	cms := configMaps(t, ns)
	if len(cms) != 8 {
		t.Fatalf("%d ConfigMaps; want 8 shards", len(cms))
	}
	list, err := sc.List(ctx, "key-")
	if err != nil || len(list) != n {
		t.Fatalf("list = %d keys, %v; want %d", len(list), err, n)
	}
	for _, e := range list {
		var i int
		_, _ = fmt.Sscanf(e.Key, "key-%d", &i)
		if string(e.Value) != fmt.Sprintf("%q", strings.Repeat(fmt.Sprint(i%10), size-2)) {
			t.Fatalf("value of %s changed", e.Key)
		}
	}
}

// A new Store (a restarted runner) reads what an earlier one wrote, versions included, and
// counts its keys against the limits.
func TestRestart(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	first, _ := newStore(t, store.Options{Namespace: ns, Limits: store.Limits{MaxKeys: 20}})
	versions := map[string]int64{}
	for i := range 20 {
		k := fmt.Sprint("k", i)
		versions[k] = mustSet(t, first.Scope("r"), k, fmt.Sprint(i))
	}
	first.Close()
	second, _ := newStore(t, store.Options{Namespace: ns, Limits: store.Limits{MaxKeys: 20}})
	list, err := second.Scope("r").List(t.Context(), "")
	if err != nil || len(list) != 20 {
		t.Fatalf("list after restart = %d keys, %v; want 20", len(list), err)
	}
	for _, e := range list {
		if e.Version != versions[e.Key] || string(e.Value) != strings.TrimPrefix(e.Key, "k") {
			t.Fatalf("%s = %s version %d; want version %d", e.Key, e.Value, e.Version, versions[e.Key])
		}
	}
	third, _ := newStore(t, store.Options{Namespace: ns, Limits: store.Limits{MaxKeys: 20}})
	expectLimit(t, "max-keys", func() error {
		_, err := third.Scope("r").Set(t.Context(), "k20", json.RawMessage(`1`), store.SetOptions{})
		return err
	})
}

// Writes queued together are one update of the ConfigMap, and writes of two replicas to one
// shard at once are all kept (each update carries the resourceVersion it read).
func TestCoalescingAndConcurrentReplicas(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	opts := store.Options{Namespace: ns, Shards: 1, Window: 100 * time.Millisecond}
	a, wa := newStore(t, opts)
	b, wb := newStore(t, opts)
	const each = 50
	var wg sync.WaitGroup
	for _, s := range []*store.Store{a, b} {
		for i := range each {
			wg.Go(func() {
				if _, err := s.Scope("co").Set(t.Context(), fmt.Sprintf("%p-%d", s, i), json.RawMessage(`1`), store.SetOptions{}); err != nil {
					t.Errorf("set: %v", err)
				}
			})
		}
	}
	wg.Wait()
	list, err := a.Scope("co").List(t.Context(), "")
	if err != nil || len(list) != 2*each {
		t.Fatalf("%d keys, %v; want %d", len(list), err, 2*each)
	}
	if writes := wa.writes.Load() + wb.writes.Load(); writes > 2*each/5 {
		t.Fatalf("%d ConfigMap writes for %d keys; want them coalesced", writes, 2*each)
	}
	t.Logf("%d keys in %d+%d ConfigMap writes", 2*each, wa.writes.Load(), wb.writes.Load())
}
