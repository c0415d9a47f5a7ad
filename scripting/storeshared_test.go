package scripting

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/jsinformer/jsinformer/store"
)

// scopeStore adapts package store's scopes to Store and SharedStores, as the engine does.
type scopeStore struct {
	st *store.Store
	sc *store.Scope
}

func (s scopeStore) Shared(name string) Store { return scopeStore{st: s.st, sc: s.st.Shared(name)} }

func (s scopeStore) Get(ctx context.Context, key string) (StoreEntry, bool, error) {
	e, ok, err := s.sc.Get(ctx, key)
	return StoreEntry{Key: e.Key, Value: e.Value, Version: e.Version, Readable: e.Readable}, ok, err
}

func (s scopeStore) Set(ctx context.Context, key string, value []byte, o StoreSetOptions) (int64, error) {
	return s.sc.Set(ctx, key, json.RawMessage(value), store.SetOptions{TTL: o.TTL, Expect: o.Expect, Readable: o.Readable})
}

func (s scopeStore) Delete(ctx context.Context, key string, expect *int64) (bool, error) {
	return s.sc.Delete(ctx, key, store.DeleteOptions{Expect: expect})
}

func (s scopeStore) List(ctx context.Context, prefix string) ([]StoreEntry, error) {
	entries, err := s.sc.List(ctx, prefix)
	out := make([]StoreEntry, len(entries))
	for i, e := range entries {
		out[i] = StoreEntry{Key: e.Key, Value: e.Value, Version: e.Version, Readable: e.Readable}
	}
	return out, err
}

// Two scripts declaring one shared namespace read each other's keys there, and only there:
// their own stores stay apart, a namespace a script does not declare throws, and a write is
// marked readable exactly when its key matches the writer's store.readable.
func TestStoreSharedNamespacesAndReadableKeys(t *testing.T) {
	t.Parallel()
	st, err := store.New(store.Memory(), store.Options{Namespace: "s"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	writer := newTestScript(t, "writer.js", `export default {
  store: { shared: ["team-a"], readable: ["pub/"] },
  onAdd(obj, ctx) {
    const team = ctx.store.shared("team-a");
    team.set("pub/owner", "writer");
    team.set("secret", "s3cr3t");
    ctx.store.set("mine", 1);
    let undeclared;
    try { ctx.store.shared("team-b") } catch (e) { undeclared = e.message }
    globalThis.out = { name: team.name, same: team === ctx.store.shared("team-a"), undeclared };
  },
};`, Options{Store: scopeStore{st: st, sc: st.Scope("writer.js")}})
	reader := newTestScript(t, "reader.js", `export default {
  store: { shared: ["team-a"] },
  onAdd(obj, ctx) {
    globalThis.out = { shared: ctx.store.shared("team-a").list().map(e => [e.key, e.value]), own: ctx.store.get("mine") };
  },
};`, Options{Store: scopeStore{st: st, sc: st.Scope("reader.js")}})
	if err := writer.OnAdd(sample(), Event{}); err != nil {
		t.Fatal(err)
	}
	if got := outJSON(t, writer); got != `{"name":"team-a","same":true,"undeclared":"ctx.store.shared: \"team-b\" is not declared: add it to the definition's store.shared (declared: [team-a])"}` {
		t.Errorf("writer out = %s", got)
	}
	if err := reader.OnAdd(sample(), Event{}); err != nil {
		t.Fatal(err)
	}
	if got := outJSON(t, reader); got != `{"shared":[["pub/owner","writer"],["secret","s3cr3t"]],"own":null}` {
		t.Errorf("reader out = %s", got)
	}
	entries, _ := st.Shared("team-a").List(t.Context(), "")
	if len(entries) != 2 || !entries[0].Readable || entries[1].Readable {
		t.Errorf("readable marks = %+v; want pub/owner only", entries)
	}
	if d := writer.Definition().Store; strings.Join(d.Shared, ",") != "team-a" || strings.Join(d.Readable, ",") != "pub/" {
		t.Errorf("definition store = %+v", d)
	}
}

// A store declaration that is not {shared, readable} of strings, or names a shared namespace
// that is not a DNS label, fails the load with the key named.
func TestStoreDeclarationErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ decl, want string }{
		{`store: []`, "'store' must be an object"},
		{`store: { shard: [] }`, "unknown key 'shard'"},
		{`store: { shared: "a" }`, "'store.shared' must be an array of strings"},
		{`store: { shared: ["Team_A"] }`, `"Team_A" is not a valid name`},
		{`store: { readable: [1] }`, "'store.readable[0]' must be a string"},
	} {
		_, err := instantiate("d.js", `export default { `+tc.decl+`, onAdd() {} };`, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v; want %q", tc.decl, err, tc.want)
		}
	}
}
