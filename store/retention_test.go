package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/store"
)

// The retention by its effect on the ConfigMaps: a store without owner is marked, kept while
// marked for less than the retention, unmarked with its data intact when its owner comes
// back, and deleted once marked for the retention; a live store and a live shared namespace
// are never touched.
func TestRetentionSweep(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	clock := &fakeClock{}
	clock.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	s, _ := newStore(t, store.Options{Namespace: ns, Shards: 2, Now: clock.now})
	ctx := t.Context()
	mustSet(t, s.Scope("kept.js"), "k", `1`)
	mustSet(t, s.Scope("gone.js"), "k", `2`)
	if _, err := s.Shared("team").Set(ctx, "k", json.RawMessage(`3`), store.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	live := map[string]bool{store.ScriptID("kept.js"): true, store.SharedID("team"): true}
	isLive := func(id string) bool { return live[id] }
	const retention = time.Hour

	sweep := func(want store.SweepResult) {
		t.Helper()
		got, err := s.Sweep(ctx, isLive, retention)
		if err != nil || got != want {
			t.Fatalf("sweep = %+v, %v; want %+v", got, err, want)
		}
	}
	sweep(store.SweepResult{Marked: 1})
	if o := owner(t, ns, "gone.js"); o.DeletedAt.IsZero() || o.Keys != 1 {
		t.Fatalf("gone.js after the first sweep = %+v; want marked, its key kept", o)
	}
	clock.advance(retention - time.Minute)
	sweep(store.SweepResult{}) // marked for less than the retention: kept

	live[store.ScriptID("gone.js")] = true // the script is back
	sweep(store.SweepResult{Unmarked: 1})
	if o := owner(t, ns, "gone.js"); !o.DeletedAt.IsZero() || o.Keys != 1 {
		t.Fatalf("gone.js back = %+v; want unmarked with its key", o)
	}
	delete(live, store.ScriptID("gone.js"))
	sweep(store.SweepResult{Marked: 1})
	clock.advance(retention)
	sweep(store.SweepResult{Deleted: 1})
	if o := owner(t, ns, "gone.js"); o.ConfigMaps != 0 {
		t.Fatalf("gone.js after the retention = %+v; want no ConfigMap", o)
	}
	if o := owner(t, ns, "kept.js"); o.Keys != 1 || !o.DeletedAt.IsZero() {
		t.Fatalf("kept.js = %+v; want untouched", o)
	}
	if e, ok, err := s.Shared("team").Get(ctx, "k"); err != nil || !ok || string(e.Value) != "3" {
		t.Fatalf("shared team = %s %v %v; want untouched", e.Value, ok, err)
	}
	// The deleted script's store starts again from empty when written.
	if _, ok, _ := s.Scope("gone.js").Get(ctx, "k"); ok {
		t.Fatal("the deleted store still reads its key")
	}
	mustSet(t, s.Scope("gone.js"), "k2", `4`)
}

// owner is script's entry of the store's inventory, zero when it has none.
func owner(t *testing.T, ns, script string) store.Owner {
	t.Helper()
	c, _ := client(t)
	owners, err := store.Inventory(t.Context(), c.CoreV1(), ns, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range owners {
		if o.Name == script && !o.Shared {
			return o
		}
	}
	return store.Owner{}
}
