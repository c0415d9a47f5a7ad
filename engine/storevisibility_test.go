package engine_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/store"
)

// A value the script did not mark readable appears nowhere the runner shows: not in the trace
// records explain returns (as JSON, what the page and tail show), not in the runner's log at
// debug level, not in the error of a write that failed; its size does. A readable key's value
// does appear in the trace.
func TestStoreValuesStayOutOfTracesLogsAndExplain(t *testing.T) {
	t.Parallel()
	ns, storeNS := uniqueName("store-vis"), uniqueName("store-vis-data")
	const secret, public = "SECRET-7f3a9-marker", "PUBLIC-81c2e-marker"
	r := startEngine(t, map[string]string{"vis.js": reconcileScript(ns, "", `
  store: { readable: ["pub/"] },
  onAdd(obj, ctx) {
    ctx.store.set("secret/" + obj.metadata.name, { token: "`+secret+`" });
    ctx.store.set("pub/" + obj.metadata.name, "`+public+`");
    ctx.store.get("secret/" + obj.metadata.name);
    ctx.store.get("pub/" + obj.metadata.name);
    ctx.store.list("");
    try { ctx.store.set("secret/big", "`+secret+`".repeat(100), { version: 12345 }) } catch (e) { console.log("refused", e.reason) }
  },`)}, func(c *engine.Config) {
		c.Store = &store.Options{Namespace: storeNS, Window: 5 * time.Millisecond, Limits: store.Limits{MaxValueBytes: 1000}}
	})
	r.namespace(t, storeNS)
	r.namespace(t, ns)
	r.create(t, configmapsGVR, configmap(ns, "a", nil, nil))
	var raw []byte
	eventually(t, "the store calls are traced", func() error {
		ex, err := r.engine.Explain(t.Context(), "v1/configmaps", ns+"/a", 0)
		if err != nil {
			return err
		}
		raw, _ = json.Marshal(ex)
		if !strings.Contains(string(raw), `"op":"list"`) || !strings.Contains(string(raw), "refused") {
			return fmt.Errorf("no complete onAdd record yet: %s", raw)
		}
		return nil
	})
	explained := string(raw)
	secretBytes := len(`{"token":"` + secret + `"}`)
	switch {
	case strings.Contains(explained, secret):
		t.Errorf("the unreadable value is in explain:\n%s", explained)
	case !strings.Contains(explained, public):
		t.Errorf("the readable value is not in explain:\n%s", explained)
	case !strings.Contains(explained, fmt.Sprintf(`"key":"secret/a","found":true,"bytes":%d`, secretBytes)):
		t.Errorf("the unreadable value's size is not in explain:\n%s", explained)
	}
	if logs := r.log.dump(); strings.Contains(logs, secret) {
		t.Errorf("the unreadable value is in the runner's log:\n%s", logs)
	}
}

// Two scripts declaring one shared namespace read each other's keys there; a script that does
// not declare it cannot reach it. When a script's file is removed, its own store is deleted
// once the retention has passed, while the store of a script still there and the shared
// namespace another script still declares are kept.
func TestStoreSharedNamespaceAndRetention(t *testing.T) {
	t.Parallel()
	ns, storeNS := uniqueName("store-sh"), uniqueName("store-sh-data")
	r := startEngine(t, map[string]string{
		"a.js": reconcileScript(ns, "", `
  store: { shared: ["team"] },
  onAdd(obj, ctx) { ctx.store.shared("team").set("from-a", obj.metadata.name); ctx.store.set("mine", 1) },`),
		"b.js": reconcileScript(ns, "", `
  store: { shared: ["team"] },
  onUpdate(old, obj, ctx) { ctx.store.set("seen", ctx.store.shared("team").get("from-a").value) },`),
		"c.js": reconcileScript(ns, "", `
  onUpdate(old, obj, ctx) {
    try { ctx.store.shared("team"); ctx.store.set("reached", true) } catch (e) { ctx.store.set("refused", e.message) }
  },`),
	}, func(c *engine.Config) {
		c.Store = &store.Options{Namespace: storeNS, Window: 5 * time.Millisecond, Retention: time.Second}
	})
	r.namespace(t, storeNS)
	r.namespace(t, ns)
	r.create(t, configmapsGVR, configmap(ns, "x", nil, nil))
	other, err := store.New(kubernetes.NewForConfigOrDie(controlplane.Require(t, env).Config).CoreV1(),
		store.Options{Namespace: storeNS}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	eventually(t, "a wrote the shared key", func() error { return has(t, other.Shared("team"), "from-a", `"x"`) })
	r.patch(t, configmapsGVR, ns, "x", `{"data":{"v":"1"}}`)
	eventually(t, "b read a's shared key", func() error { return has(t, other.Scope("b.js"), "seen", `"x"`) })
	eventually(t, "c was refused", func() error { return has(t, other.Scope("c.js"), "refused", "") })
	if _, ok, _ := other.Scope("c.js").Get(t.Context(), "reached"); ok {
		t.Fatal("a script reached a shared namespace it did not declare")
	}
	if err := os.Remove(filepath.Join(r.dir, "a.js")); err != nil {
		t.Fatal(err)
	}
	c := kubernetes.NewForConfigOrDie(controlplane.Require(t, env).Config).CoreV1()
	eventuallyWithin(t, 20*time.Second, "a.js's store is deleted after the retention", func() error {
		owners, err := store.Inventory(t.Context(), c, storeNS, time.Now())
		if err != nil {
			return err
		}
		for _, o := range owners {
			if o.Name == "a.js" && !o.Shared {
				return fmt.Errorf("a.js still has %d ConfigMaps (gone since %v)", o.ConfigMaps, o.DeletedAt)
			}
		}
		return nil
	})
	if err := has(t, other.Shared("team"), "from-a", `"x"`); err != nil {
		t.Fatalf("the shared namespace b still declares: %v", err)
	}
	if err := has(t, other.Scope("b.js"), "seen", `"x"`); err != nil {
		t.Fatalf("b.js's store: %v", err)
	}
}

// has checks that sc holds key with value (any value when want is "").
func has(t *testing.T, sc *store.Scope, key, want string) error {
	e, ok, err := sc.Get(t.Context(), key)
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("no key %s", key)
	case want != "" && string(e.Value) != want:
		return fmt.Errorf("%s = %s; want %s", key, e.Value, want)
	}
	return nil
}

// Two runners (engines) sharing the store's namespace run the same script on the same
// objects: for each object both compare-and-set one key as "create only" at once, and exactly
// one wins; the other's set throws reason Conflict, which it records.
func TestStoreCompareAndSetTwoEngines(t *testing.T) {
	t.Parallel()
	ns, storeNS := uniqueName("store-cas"), uniqueName("store-cas-data")
	script := func(me string) string {
		return reconcileScript(ns, "", `
  onAdd(obj, ctx) {
    const key = "winner/" + obj.metadata.name;
    try { ctx.store.set(key, "`+me+`", { version: 0 }) }
    catch (e) { ctx.store.set("lost/" + obj.metadata.name + "/`+me+`", [e.reason, e.code]) }
  },`)
	}
	opts := func(c *engine.Config) { c.Store = &store.Options{Namespace: storeNS, Window: 5 * time.Millisecond} }
	a := startEngine(t, map[string]string{"cas.js": script("A")}, opts)
	startEngine(t, map[string]string{"cas.js": script("B")}, opts)
	a.namespace(t, storeNS)
	a.namespace(t, ns)
	const n = 10
	for i := range n {
		a.create(t, configmapsGVR, configmap(ns, fmt.Sprint("o", i), nil, nil))
	}
	other, err := store.New(kubernetes.NewForConfigOrDie(controlplane.Require(t, env).Config).CoreV1(),
		store.Options{Namespace: storeNS}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	sc := other.Scope("cas.js")
	eventually(t, "every object has a winner and a loser", func() error {
		winners, err := sc.List(t.Context(), "winner/")
		if err != nil {
			return err
		}
		lost, err := sc.List(t.Context(), "lost/")
		if err != nil {
			return err
		}
		if len(winners) != n || len(lost) != n {
			return fmt.Errorf("%d winners, %d losers; want %d of each", len(winners), len(lost), n)
		}
		for i, w := range winners {
			var who string
			_ = json.Unmarshal(w.Value, &who)
			loser := map[string]string{"A": "B", "B": "A"}[who]
			if want := "lost/" + strings.TrimPrefix(w.Key, "winner/") + "/" + loser; lost[i].Key != want || string(lost[i].Value) != `["Conflict",409]` {
				return fmt.Errorf("%s won %s, loser record %s = %s; want %s = [\"Conflict\",409]", who, w.Key, lost[i].Key, lost[i].Value, want)
			}
		}
		return nil
	})
}

// The errors a script sees from the store on the real control plane are as docs/store.md
// documents them: a limit is code 413, reason RequestEntityTooLarge, its message naming the
// flag; a stale compare-and-set is code 409, reason Conflict; neither changes the store.
func TestStoreErrorsAsDocumented(t *testing.T) {
	t.Parallel()
	ns, storeNS := uniqueName("store-err"), uniqueName("store-err-data")
	r := startEngine(t, map[string]string{"err.js": reconcileScript(ns, "", `
  onAdd(obj, ctx) {
    const seen = (f) => { try { f(); return "no error" } catch (e) { return [e.code, e.reason, e.message] } };
    const v = ctx.store.set("k", 1);
    ctx.store.set("k", 2);
    const out = {
      value: seen(() => ctx.store.set("big", "x".repeat(2000))),
      key: seen(() => ctx.store.set("k".repeat(40), 1)),
      keys: seen(() => ctx.store.set("third", 1)),
      conflict: seen(() => ctx.store.set("k", 3, { version: v })),
      del: seen(() => ctx.store.delete("k", { version: v })),
    };
    ctx.store.delete("k");
    ctx.store.set("out", out);
  },`)}, func(c *engine.Config) {
		c.Store = &store.Options{Namespace: storeNS, Window: 5 * time.Millisecond,
			Limits: store.Limits{MaxValueBytes: 1000, MaxKeyBytes: 32, MaxKeys: 1}}
	})
	r.namespace(t, storeNS)
	r.namespace(t, ns)
	r.create(t, configmapsGVR, configmap(ns, "a", nil, nil))
	other, err := store.New(kubernetes.NewForConfigOrDie(controlplane.Require(t, env).Config).CoreV1(),
		store.Options{Namespace: storeNS}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var out map[string][]any
	eventually(t, "the script recorded its errors", func() error {
		e, ok, err := other.Scope("err.js").Get(t.Context(), "out")
		if err != nil || !ok {
			return fmt.Errorf("no out yet: %w", err)
		}
		return json.Unmarshal(e.Value, &out)
	})
	for name, want := range map[string][]string{
		"value": {"413", "RequestEntityTooLarge", "max-value-bytes"}, "key": {"413", "RequestEntityTooLarge", "max-key-bytes"},
		"keys": {"413", "RequestEntityTooLarge", "max-keys"}, "conflict": {"409", "Conflict", "expected version"},
		"del": {"409", "Conflict", "expected version"},
	} {
		got := out[name]
		if len(got) != 3 || fmt.Sprint(got[0]) != want[0] || got[1] != want[1] || !strings.Contains(fmt.Sprint(got[2]), want[2]) {
			t.Errorf("%s: %v; want code %s, reason %s, message naming %s", name, got, want[0], want[1], want[2])
		}
	}
	if list, _ := other.Scope("err.js").List(t.Context(), ""); len(list) != 1 || list[0].Key != "out" {
		t.Errorf("keys after the refused writes: %+v; want only out (k deleted, nothing refused stored)", list)
	}
}
