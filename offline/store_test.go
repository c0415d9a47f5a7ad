package offline_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/internal/memcluster"
	"github.com/jsinformer/jsinformer/store"
)

// In the harness ctx.store is the runner's store in memory: a test seeds and reads it, a
// reload keeps it, compare-and-set conflicts as on the API server, and TTLs follow the
// virtual clock.
func TestOfflineStore(t *testing.T) {
	t.Parallel()
	const script = `export default {
  watch: "apps/v1/deployments",
  onAdd(d, ctx) {
    const e = ctx.store.get("adds");
    ctx.store.set("adds", e.value + 1, { version: e.version });
    let reason;
    try { ctx.store.set("adds", 0, { version: e.version }) } catch (err) { reason = err.reason }
    ctx.store.set("last/" + d.metadata.name, { reason }, { ttl: "1h" });
  },
};`
	r := startOffline(t, script)
	sc := r.Store().Scope("script.js")
	if _, err := sc.Set(t.Context(), "adds", json.RawMessage(`10`), store.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.cluster.Create(deploymentsGVR, "default", unstructuredOf(deployment("default", "web", "nginx:1", 1)), memcluster.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	r.settle(t, 0)
	if err := r.Load(t.Context(), "script.js", []byte(script+"\n")); err != nil { // a reload: the store stays
		t.Fatal(err)
	}
	r.settle(t, 0)
	adds, _, _ := sc.Get(t.Context(), "adds")
	last, ok, _ := sc.Get(t.Context(), "last/web")
	if string(adds.Value) != "12" || !ok || string(last.Value) != `{"reason":"Conflict"}` {
		t.Fatalf("adds = %s, last/web = %s %v; want 12 (an add, then the reload's initial add) and a Conflict", adds.Value, last.Value, ok)
	}
	if err := r.Advance(t.Context(), 61*time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := sc.Get(t.Context(), "last/web"); ok {
		t.Fatal("last/web outlived its ttl on the virtual clock")
	}
}
