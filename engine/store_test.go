package engine_test

import (
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/store"
)

// A handler's and a reconcile's ctx.store writes land in the store's namespace under the
// script's name, where another replica (a second store) reads them; a later call reads what
// an earlier one wrote.
func TestStoreFromHandlersAndReconcile(t *testing.T) {
	t.Parallel()
	ns, storeNS := uniqueName("store-src"), uniqueName("store-data")
	r := startEngine(t, map[string]string{"counting.js": reconcileScript(ns, "", `
  onAdd(obj, ctx) {
    for (;;) {
      const e = ctx.store.get("adds");
      try { ctx.store.set("adds", (e ? e.value : 0) + 1, { version: e ? e.version : 0 }); break; }
      catch (err) { if (err.reason !== "Conflict") throw err; }
    }
  },
  reconcile(key, ctx) {
    ctx.store.set("seen/" + key, { adds: ctx.store.get("adds").value });
  },`)}, func(c *engine.Config) {
		c.Store = &store.Options{Namespace: storeNS, Window: 5 * time.Millisecond}
	})
	r.namespace(t, storeNS)
	r.namespace(t, ns)
	r.create(t, configmapsGVR, configmap(ns, "a", nil, nil))
	r.create(t, configmapsGVR, configmap(ns, "b", nil, nil))
	other, err := store.New(kubernetes.NewForConfigOrDie(controlplane.Require(t, env).Config).CoreV1(),
		store.Options{Namespace: storeNS}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	sc := other.Scope("counting.js")
	deadline := time.Now().Add(30 * time.Second)
	for {
		adds, ok, err := sc.Get(t.Context(), "adds")
		seen, _ := sc.List(t.Context(), "seen/")
		if err == nil && ok && string(adds.Value) == "2" && len(seen) == 2 {
			var v struct{ Adds int }
			if err := json.Unmarshal(seen[1].Value, &v); err != nil || v.Adds < 1 || seen[1].Key != "seen/"+ns+"/b" {
				t.Fatalf("seen = %+v (%s)", seen, seen[1].Value)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("adds = %s %v %v, seen %d keys; want 2 and 2\n%s", adds.Value, ok, err, len(seen), r.log.dump())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
