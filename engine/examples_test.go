package engine_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/status"
)

var (
	replicasetsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	podsGVR        = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	crdsGVR        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	widgetsGVR     = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
)

// example reads one script of examples/scripts, unchanged.
func example(t *testing.T, name string) map[string]string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "examples", "scripts", name))
	if err != nil {
		t.Fatalf("read example: %v", err)
	}
	return map[string]string{name: string(src)}
}

func TestExample01LogChanges(t *testing.T) {
	t.Parallel()
	r := startEngine(t, example(t, "01-log-changes.js"), asGenerated(t))
	defer r.checkGranted(t)
	ns := r.namespace(t, uniqueName("ex01"))
	r.create(t, deploymentsGVR, deployment(ns, "web", "nginx:1.27", 1))
	const script = "01-log-changes.js"
	r.calls.waitFor(t, "created", 1, call{Script: script, Event: "add", Object: ns + "/web", Result: "ok",
		Logged: "deployment created", Attrs: map[string]string{"name": ns + "/web"}}.match)
	r.patch(t, deploymentsGVR, ns, "web", `{"spec":{"replicas":3}}`)
	got := r.calls.waitFor(t, "changed", 1, call{Script: script, Event: "update", Object: ns + "/web", Result: "ok", Logged: "deployment changed"}.match)
	if c := logAttr(got[0], "deployment changed", "changes"); c != "spec.replicas: 1 -> 3" {
		t.Fatalf("changes = %q, want spec.replicas: 1 -> 3", c)
	}
	r.delete(t, deploymentsGVR, ns, "web")
	r.calls.waitFor(t, "deleted", 1, call{Script: script, Event: "delete", Object: ns + "/web", Result: "ok",
		Logged: "deployment deleted", Attrs: map[string]string{"name": ns + "/web", "finalStateUnknown": "false"}}.match)
}

func TestExample02IndexByImage(t *testing.T) {
	t.Parallel()
	r := startEngine(t, example(t, "02-index-by-image.js"), asGenerated(t))
	defer r.checkGranted(t)
	ns := r.namespace(t, uniqueName("ex02"))
	r.create(t, deploymentsGVR, deployment(ns, "a", ns+"/app:1", 1))
	r.create(t, deploymentsGVR, deployment(ns, "b", ns+"/app:1", 1))
	r.calls.waitFor(t, "both share the image", 1, call{Script: "02-index-by-image.js", Logged: "deployments using image",
		Attrs: map[string]string{"image": ns + "/app:1", "count": "2", "deployments": ns + "/a," + ns + "/b"}}.match)
	r.patch(t, deploymentsGVR, ns, "b", `{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"`+ns+`/app:2"}]}}}}`)
	r.calls.waitFor(t, "b alone on the new image", 1, call{Script: "02-index-by-image.js", Object: ns + "/b", Logged: "deployments using image",
		Attrs: map[string]string{"image": ns + "/app:2", "count": "1", "deployments": ns + "/b"}}.match)
}

func TestExample03PodOwner(t *testing.T) {
	t.Parallel()
	r := startEngine(t, example(t, "03-pod-owner.js"), asGenerated(t))
	defer r.checkGranted(t)
	ns := r.namespace(t, uniqueName("ex03"))
	d := r.create(t, deploymentsGVR, deployment(ns, "web", "nginx:1.27", 1))
	rs := deployment(ns, "web-5d8f", "nginx:1.27", 1)
	rs["kind"] = "ReplicaSet"
	setOwner(rs, d)
	rsObj := r.create(t, replicasetsGVR, rs)
	// The owners reach the script's cache through informers of their own: the pod's add may
	// come first, and the chain is read from the cache. Created once both are there.
	for _, owner := range []string{"web", "web-5d8f"} {
		r.calls.waitFor(t, owner+" cached", 1, call{Script: "03-pod-owner.js", Event: "add", Object: ns + "/" + owner}.match)
	}
	pod := map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "web-5d8f-x2x", "namespace": ns},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "main", "image": "nginx:1.27"}}}}
	setOwner(pod, rsObj)
	r.create(t, podsGVR, pod)
	r.calls.waitFor(t, "owner chain", 1, call{Script: "03-pod-owner.js", Object: ns + "/web-5d8f-x2x", Logged: "pod owner",
		Attrs: map[string]string{"pod": ns + "/web-5d8f-x2x", "owners": "ReplicaSet/web-5d8f <- Deployment/web"}}.match)
}

func setOwner(obj map[string]any, owner *unstructured.Unstructured) {
	meta := obj["metadata"].(map[string]any)
	meta["ownerReferences"] = []any{map[string]any{
		"apiVersion": owner.GetAPIVersion(), "kind": owner.GetKind(), "name": owner.GetName(),
		"uid": string(owner.GetUID()), "controller": true,
	}}
}

func TestExample04CustomResource(t *testing.T) {
	t.Parallel()
	pre := startEngine(t, nil, nil)
	applyWidgetCRD(t, pre)
	r := startEngine(t, example(t, "04-widgets.ts"), asGenerated(t))
	defer r.checkGranted(t)
	ns := r.namespace(t, uniqueName("ex04"))
	r.create(t, widgetsGVR, map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "gear", "namespace": ns}, "spec": map[string]any{"size": int64(3), "color": "red"}})
	r.calls.waitFor(t, "widget logged", 1, call{Script: "04-widgets.ts", Object: ns + "/gear", Logged: "widget",
		Attrs: map[string]string{"name": ns + "/gear", "size": "3", "color": "red"}}.match)
	r.patch(t, widgetsGVR, ns, "gear", `{"spec":{"size":12}}`)
	r.calls.waitFor(t, "too large", 1, call{Script: "04-widgets.ts", Object: ns + "/gear", Logged: "widget too large",
		Attrs: map[string]string{"name": "gear", "size": "12"}}.match)
}

// applyWidgetCRD creates examples/crds/widgets.yaml and waits until widgets are served.
func applyWidgetCRD(t *testing.T, r *runner) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "examples", "crds", "widgets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &crd.Object); err != nil {
		t.Fatal(err)
	}
	_, err = r.dyn.Resource(crdsGVR).Create(t.Context(), crd, metav1.CreateOptions{})
	if err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("create CRD: %v", err)
	}
	waitServed(t, r, widgetsGVR)
}

func waitServed(t *testing.T, r *runner, gvr schema.GroupVersionResource) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := r.dyn.Resource(gvr).List(t.Context(), metav1.ListOptions{Limit: 1})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not served: %v", gvr.Resource, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestCRDCreatedAfterStart(t *testing.T) {
	t.Parallel()
	// The first script makes the engine discover the API before the CRD exists.
	r := startEngine(t, map[string]string{"cm.js": taggedScript("late-crd", "cm")}, nil)
	// Unique names let the test run again against the same server (CRDs are cluster-wide).
	id := uniqueName("late")
	group, short := id+".example.com", "gz"+strings.TrimPrefix(id, "late-")
	crd := map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "gizmos." + group},
		"spec": map[string]any{"group": group, "scope": "Namespaced",
			"names": map[string]any{"kind": "Gizmo", "plural": "gizmos", "shortNames": []any{short}},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}}
	r.create(t, crdsGVR, crd)
	gizmos := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gizmos"}
	waitServed(t, r, gizmos)
	r.write(t, "g.js", `export default { watch: "`+short+`", onAdd(g) { log.info("gizmo", { name: g.metadata.name }); } };`)
	waitLoad(t, r, "g.js", status.LoadLoaded, "")
	ns := r.namespace(t, uniqueName("late-crd"))
	r.create(t, gizmos, map[string]any{"apiVersion": group + "/v1", "kind": "Gizmo",
		"metadata": map[string]any{"name": "g1", "namespace": ns}})
	r.calls.waitFor(t, "gizmo seen", 1, call{Script: "g.js", Event: "add", Object: ns + "/g1", Handler: "onAdd", Result: "ok"}.match)
}

func TestScriptOnMissingCRDLoadsOnceItExists(t *testing.T) {
	t.Parallel()
	group := uniqueName("retry") + ".example.com" // unique: CRDs are cluster-wide and stay
	script := `export default { watch: "sprockets.` + group + `", onAdd(s) { log.info("sprocket", { name: s.metadata.name }); } };`
	r := startEngine(t, map[string]string{"s.js": script}, func(c *engine.Config) { c.RetryUnknownResources = 100 * time.Millisecond })
	waiting := waitScript(t, r.engine, "s.js", "waiting for its resource", func(s status.ScriptStatus) bool { return s.State == status.ScriptWaiting })
	if l, _ := lastLoad(waiting, status.LoadWaiting); l.Error == nil || !strings.Contains(l.Error.Message, "unknown resource") {
		t.Fatalf("waiting load %+v, want an unknown resource error", l)
	}
	// The operator's contract: the first failure is one WARN.
	fails := r.log.waitFor(t, "load failure", 1, msg("script waiting for its resource to be served", "script", "s.js"))
	if fails[0].level != slog.LevelWarn {
		t.Errorf("level = %s, want WARN: waiting for a CRD is a supported case", fails[0].level)
	}
	if !strings.Contains(fails[0].attrs["error"], "unknown resource") {
		t.Fatalf("error = %q, want unknown resource", fails[0].attrs["error"])
	}
	crd := map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "sprockets." + group},
		"spec": map[string]any{"group": group, "scope": "Cluster",
			"names": map[string]any{"kind": "Sprocket", "plural": "sprockets"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}}
	r.log.waitFor(t, "a quiet retry", 1, msg("script still not loaded", "script", "s.js"))
	if got := r.log.find(msg("script waiting for its resource to be served", "script", "s.js")); len(got) != 1 {
		t.Fatalf("the same failure was reported %d times at warning level, want once", len(got))
	}
	if got := r.log.find(func(rec record) bool { return rec.level >= slog.LevelError }); len(got) != 0 {
		t.Fatalf("errors logged while waiting for the CRD: %v", got)
	}
	r.create(t, crdsGVR, crd)
	waitLoad(t, r, "s.js", status.LoadLoaded, "")
	sprockets := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "sprockets"}
	r.create(t, sprockets, map[string]any{"apiVersion": group + "/v1", "kind": "Sprocket", "metadata": map[string]any{"name": "s1"}})
	r.calls.waitFor(t, "sprocket seen", 1, call{Script: "s.js", Event: "add", Object: "s1", Handler: "onAdd", Result: "ok"}.match)
}
