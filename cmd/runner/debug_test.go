package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

var cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// debugEnv is one runner with the debug API on a free loopback port, in a namespace of its own,
// with the scripts of the docs/debugging.md walk-through: a selector that excludes the object,
// a handler that throws, a key stuck in retries, and one that writes.
type debugEnv struct {
	addr    string
	ns      string
	scripts string // the runner's scripts folder: a test may add a script (hot reload)
	dyn     dynamic.Interface
	out     *syncBuffer
}

const (
	// label.js only sees app=web; the object is app=db.
	labelScript = `export default {
  watch: { resource: "configmaps", namespace: "NS", labelSelector: "app=web" },
  onAdd(cm) { log.info("labelled", { name: cm.metadata.name }); },
};`
	// throws.js fails on every update.
	throwsScript = `export default {
  watch: { resource: "configmaps", namespace: "NS" },
  onAdd(cm) { console.log("saw", cm.metadata.name); },
  onUpdate(old, cm) { throw new Error("cannot handle " + cm.metadata.name); },
};`
	// stuck.js: a key fails while data.fail is "yes", waits an hour when "later".
	stuckScript = `export default {
  watch: { resource: "configmaps", namespace: "NS" },
  indexers: { byTeam: (cm) => [cm.metadata.labels?.team ?? "none"] },
  maxRetries: 1000,
  reconcile(key, ctx) {
    const [ns, name] = key.split("/");
    const cm = ctx.cache.get(ns, name);
    if (cm?.data?.fail === "yes") throw new Error("quota exceeded for " + key);
    if (cm?.data?.fail === "later") return { requeueAfter: "1h" };
  },
};`
	// writer.js patches "target" when called outside the initial list (a replay does that).
	writerScript = `export default {
  watch: { resource: "configmaps", namespace: "NS" },
  onAdd(cm, ctx) {
    if (!ctx.isInInitialList && cm.metadata.name === "target") {
      k8s.patch("configmaps", cm.metadata.namespace, "target", { metadata: { labels: { touched: "yes" } } });
    }
  },
};`
)

func startDebugEnv(t *testing.T, extra ...string) *debugEnv {
	t.Helper()
	cp := controlplane.Require(t, env)
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	d := &debugEnv{addr: freeAddr(t), ns: "dbg-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")), dyn: dyn}
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": d.ns}}}
	if _, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(t.Context(), nsObj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	d.createCM(t, "api", map[string]any{"app": "db", "team": "blue"}, map[string]any{"fail": "yes"})
	d.createCM(t, "target", nil, nil)
	scripts := t.TempDir()
	d.scripts = scripts
	for name, src := range map[string]string{"label.js": labelScript, "throws.js": throwsScript, "stuck.js": stuckScript, "writer.js": writerScript} {
		writeScript(t, scripts, name, strings.ReplaceAll(src, "NS", d.ns))
	}
	args := append([]string{"--kubeconfig", cp.Kubeconfig, "--scripts", scripts, "--debug-addr", d.addr}, extra...)
	var stop func()
	d.out, stop = startRunner(t, args...)
	waitOutput(t, d.out, "msg=ready")
	t.Cleanup(stop)
	return d
}

func (d *debugEnv) createCM(t *testing.T, name string, labels, data map[string]any) {
	t.Helper()
	meta := map[string]any{"name": name, "namespace": d.ns}
	if labels != nil {
		meta["labels"] = labels
	}
	obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}
	if data != nil {
		obj["data"] = data
	}
	if _, err := d.dyn.Resource(cmGVR).Namespace(d.ns).Create(t.Context(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (d *debugEnv) patchCM(t *testing.T, name, patch string) {
	t.Helper()
	if _, err := d.dyn.Resource(cmGVR).Namespace(d.ns).Patch(t.Context(), name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// run runs a debug subcommand against the runner.
func (d *debugEnv) run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	return execute(t, ctx, append(args, "--debug-addr", d.addr)...)
}

// must runs a debug subcommand that must succeed.
func (d *debugEnv) must(t *testing.T, args ...string) string {
	t.Helper()
	out, err := d.run(t, args...)
	if err != nil {
		t.Fatalf("runner %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// jsonOf runs a subcommand with -o json and decodes its answer into v.
func (d *debugEnv) jsonOf(t *testing.T, v any, args ...string) {
	t.Helper()
	out := d.must(t, append(args, "-o", "json")...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("runner %s -o json: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// eventually polls check until it returns "" (success) or the deadline passes.
func eventually(t *testing.T, what string, check func() string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s", what, msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (d *debugEnv) explain(t *testing.T, name string) inspection.Explanation {
	t.Helper()
	var x inspection.Explanation
	d.jsonOf(t, &x, "explain", "cm", d.ns+"/"+name)
	return x
}

func delivery(x inspection.Explanation, script string) inspection.Delivery {
	for _, d := range x.Deliveries {
		if d.Script == script {
			return d
		}
	}
	return inspection.Delivery{}
}

func records(x inspection.Explanation, script, event string) []inspection.TraceRecord {
	var out []inspection.TraceRecord
	for _, r := range x.Records {
		if r.Script == script && r.Event == event {
			out = append(out, r)
		}
	}
	return out
}

func (d *debugEnv) keyState(t *testing.T, script, key string) (inspection.KeyState, bool) {
	t.Helper()
	var q inspection.QueueView
	d.jsonOf(t, &q, "queue", script)
	for _, s := range q.Scripts {
		for _, k := range s.Keys {
			if k.Key == key {
				return k, true
			}
		}
	}
	return inspection.KeyState{}, false
}

// rawRequest sends a request to the debug API as a browser page or another client might.
func rawRequest(t *testing.T, method, url, host, contentType, body string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}
