package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/store"
)

// Inventory counts each store's keys, bytes and ConfigMaps and its last write; Entries reads
// a store's keys with their readable marks; DeleteKey removes one key wherever it is, so that
// a running Store no longer reads it and its compare-and-set sees the change; DeleteAll
// removes a store.
func TestInventoryAndDeletes(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	s, _ := newStore(t, store.Options{Namespace: ns, Shards: 4})
	c, _ := client(t)
	ctx := t.Context()
	sc := s.Scope("inv.js")
	before := time.Now().Add(-time.Second)
	v := mustSet(t, sc, "a", `"xx"`)
	mustSet(t, sc, "b", `1`)
	if _, err := sc.Set(ctx, "pub/c", json.RawMessage(`true`), store.SetOptions{Readable: true}); err != nil {
		t.Fatal(err)
	}
	mustSet(t, s.Scope("other.js"), "z", `0`)
	o := owner(t, ns, "inv.js")
	if o.Keys != 3 || o.Bytes != len("a")+4+len("b")+1+len("pub/c")+4 || o.ConfigMaps == 0 || o.LastWrite.Before(before) {
		t.Fatalf("inventory of inv.js = %+v; want 3 keys, %d bytes, a recent write", o, 3+1+1+1+5+4)
	}
	entries, err := store.Entries(ctx, c.CoreV1(), ns, store.ScriptID("inv.js"), time.Now())
	if err != nil || len(entries) != 3 || entries[2].Key != "pub/c" || !entries[2].Readable || entries[0].Readable {
		t.Fatalf("entries = %+v, %v; want a, b and readable pub/c", entries, err)
	}
	existed, err := store.DeleteKey(ctx, c.CoreV1(), ns, store.ScriptID("inv.js"), "a")
	if err != nil || !existed {
		t.Fatalf("delete key a = %v, %v", existed, err)
	}
	if _, ok, _ := sc.Get(ctx, "a"); ok {
		t.Fatal("the running store still reads the deleted key")
	}
	if _, err := sc.Set(ctx, "a", json.RawMessage(`1`), store.SetOptions{Expect: ptr(v)}); err == nil {
		t.Fatal("a compare-and-set against the version before the delete succeeded")
	}
	if existed, err := store.DeleteKey(ctx, c.CoreV1(), ns, store.ScriptID("inv.js"), "nope"); err != nil || existed {
		t.Fatalf("delete of a missing key = %v, %v; want false", existed, err)
	}
	n, err := store.DeleteAll(ctx, c.CoreV1(), ns, store.ScriptID("inv.js"))
	if err != nil || n == 0 || owner(t, ns, "inv.js").ConfigMaps != 0 {
		t.Fatalf("delete all = %d, %v; want every ConfigMap gone", n, err)
	}
	if owner(t, ns, "other.js").Keys != 1 {
		t.Fatal("deleting one store touched another")
	}
}
