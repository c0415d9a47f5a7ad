package engine_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/status"
)

func TestK8sVerbsFromScripts(t *testing.T) {
	t.Parallel()
	ns := uniqueName("k8s-verbs")
	r := startEngine(t, map[string]string{"cases.js": caseScript(ns)}, nil)
	r.namespace(t, ns)
	runCases(t, r, ns, []scriptCase{
		{name: "get", setup: createCM("get-me", map[string]any{"v": "1"}),
			code: `return k8s.get("configmaps", ns, "get-me").data;`, want: `ok {"v":"1"}`},
		{name: "list-label-selector", setup: func(t *testing.T, r *runner, ns string) {
			for _, c := range []struct{ name, color string }{{"red-1", "red"}, {"red-2", "red"}, {"blue-1", "blue"}} {
				r.create(t, configmapsGVR, configmap(ns, c.name, map[string]any{"color": c.color}, nil))
			}
		}, code: `return k8s.list("configmaps", { namespace: ns, labelSelector: "color=red" }).map((c) => c.metadata.name);`,
			want: `ok ["red-1","red-2"]`},
		{name: "list-field-selector", setup: both(createCM("field-1", nil), createCM("field-2", nil)),
			code: `return k8s.list("v1/configmaps", { namespace: ns, fieldSelector: "metadata.name=field-2" }).map((c) => c.metadata.name);`,
			want: `ok ["field-2"]`},
		{name: "create",
			code: `return k8s.create("configmaps", { apiVersion: "v1", kind: "ConfigMap",
			  metadata: { name: "created", namespace: ns }, data: { k: "v" } }).metadata.uid.length > 0;`,
			want: "ok true", check: both(wantData("created", map[string]string{"k": "v"}), wantManager("created", "jsinformer/Update"))},
		{name: "update", setup: createCM("upd", map[string]any{"v": "1"}),
			code: `const c = util.clone(k8s.get("configmaps", ns, "upd")); c.data.v = "2"; return k8s.update("configmaps", c).data.v;`,
			want: `ok "2"`, check: wantData("upd", map[string]string{"v": "2"})},
		{name: "patch-merge", setup: createCM("pm", map[string]any{"a": "1", "b": "2"}),
			code: `return k8s.patch("configmaps", ns, "pm", { data: { b: null, c: "3" } }).data;`,
			want: `ok {"a":"1","c":"3"}`, check: wantData("pm", map[string]string{"a": "1", "c": "3"})},
		{name: "patch-json", setup: createCM("pj", map[string]any{"a": "1"}),
			code: `return k8s.patch("configmaps", ns, "pj", [{ op: "add", path: "/data/j", value: "x" }, { op: "remove", path: "/data/a" }], { type: "json" }).data;`,
			want: `ok {"j":"x"}`, check: wantData("pj", map[string]string{"j": "x"})},
		{name: "patch-strategic", setup: func(t *testing.T, r *runner, ns string) {
			d := deployment(ns, "sm", "nginx:1.27", 1)
			podSpec := d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			podSpec["containers"] = append(podSpec["containers"].([]any), map[string]any{"name": "side", "image": "busybox:1.36"})
			r.create(t, deploymentsGVR, d)
		}, code: `const d = k8s.patch("deployments", ns, "sm",
			  { spec: { template: { spec: { containers: [{ name: "main", image: "nginx:1.28" }] } } } }, { type: "strategic" });
			return d.spec.template.spec.containers.map((c) => c.name + "=" + c.image);`,
			// A merge patch would have replaced the list; strategic merges it by container name.
			want: `ok ["main=nginx:1.28","side=busybox:1.36"]`},
		{name: "patch-apply",
			code: `return k8s.patch("configmaps", ns, "applied", { apiVersion: "v1", kind: "ConfigMap",
			  metadata: { name: "applied", namespace: ns }, data: { a: "1" } }, { type: "apply" }).data;`,
			want: `ok {"a":"1"}`, check: both(wantData("applied", map[string]string{"a": "1"}), wantManager("applied", "jsinformer/Apply"))},
		{name: "patch-apply-conflict", setup: applyAs("other", "contested", map[string]any{"owner": "other"}),
			code: `k8s.patch("configmaps", ns, "contested", { apiVersion: "v1", kind: "ConfigMap",
			  metadata: { name: "contested", namespace: ns }, data: { owner: "script" } }, { type: "apply" });`,
			want: "error 409 Conflict", check: wantData("contested", map[string]string{"owner": "other"})},
		{name: "patch-apply-force", setup: applyAs("other", "forced", map[string]any{"owner": "other"}),
			code: `return k8s.patch("configmaps", ns, "forced", { apiVersion: "v1", kind: "ConfigMap",
			  metadata: { name: "forced", namespace: ns }, data: { owner: "script" } }, { type: "apply", force: true }).data;`,
			want: `ok {"owner":"script"}`, check: both(wantData("forced", map[string]string{"owner": "script"}), wantManager("forced", "jsinformer/Apply"))},
		{name: "delete-background", setup: createCM("del-bg", nil),
			code: `k8s.delete("configmaps", ns, "del-bg", { propagationPolicy: "Background" });`, want: "ok undefined",
			check: func(t *testing.T, r *runner, ns string) {
				eventually(t, "del-bg is gone", r.gone(t, configmapsGVR, ns, "del-bg"))
			}},
		{name: "delete-foreground", setup: createCM("del-fg", nil),
			code: `k8s.delete("configmaps", ns, "del-fg", { propagationPolicy: "Foreground" });`, want: "ok undefined",
			check: wantDeletingWith("del-fg", metav1.FinalizerDeleteDependents)},
		{name: "delete-orphan", setup: createCM("del-or", nil),
			code: `k8s.delete("configmaps", ns, "del-or", { propagationPolicy: "Orphan" });`, want: "ok undefined",
			check: wantDeletingWith("del-or", metav1.FinalizerOrphanDependents)},
		{name: "update-status", setup: createDeployment("st"),
			// The spec change is ignored: only the status subresource is written.
			code: `const d = util.clone(k8s.get("apps/v1/deployments", ns, "st"));
			d.status = { collisionCount: 4 }; d.spec.replicas = 9;
			return k8s.updateStatus("deployments", d).status.collisionCount;`,
			want: "ok 4", check: wantDeployment("st", 1, 4)},
		{name: "patch-status", setup: createDeployment("pst"),
			code: `return k8s.patchStatus("deployments", ns, "pst", { status: { collisionCount: 2 }, spec: { replicas: 7 } }).status.collisionCount;`,
			want: "ok 2", check: wantDeployment("pst", 1, 2)},
		{name: "finalizers", setup: createCM("fin", nil),
			code: `k8s.addFinalizer("configmaps", ns, "fin", "example.com/a");
			k8s.addFinalizer("configmaps", ns, "fin", "example.com/b");
			k8s.addFinalizer("configmaps", ns, "fin", "example.com/a");
			const left = k8s.removeFinalizer("configmaps", ns, "fin", "example.com/a");
			return [left.metadata.finalizers, k8s.removeFinalizer("configmaps", ns, "gone", "example.com/a")];`,
			want: `ok [["example.com/b"],null]`, check: func(t *testing.T, r *runner, ns string) {
				if got := r.mustFetch(t, configmapsGVR, ns, "fin").GetFinalizers(); fmt.Sprint(got) != "[example.com/b]" {
					t.Fatalf("finalizers on the server = %v", got)
				}
				r.patch(t, configmapsGVR, ns, "fin", `{"metadata":{"finalizers":null}}`) // let the namespace go
			}},
		{name: "owner-and-condition", setup: createDeployment("owner"),
			code: `const owner = k8s.get("apps/v1/deployments", ns, "owner");
			const cm = k8s.create("configmaps", { metadata: { name: "owned", namespace: ns, ownerReferences: [util.ownerReference(owner)] } });
			const conds = util.setStatusCondition([], { type: "Ready", status: "True", reason: "Done", message: "" });
			return [cm.metadata.ownerReferences[0].uid === owner.metadata.uid, cm.metadata.ownerReferences[0].controller, conds[0].type];`,
			want: `ok [true,true,"Ready"]`},
		{name: "event", setup: createCM("ev-target", nil),
			// Repeats of one Event are counted on it, as client-go's recorder does.
			code: `const target = k8s.get("configmaps", ns, "ev-target");
			for (let i = 0; i < 3; i++) k8s.event(target, "Warning", "Tested", "hello from a script");`,
			want: "ok undefined", check: checkEvent},
	})
}

// checkEvent checks the Event the "event" case recorded about ConfigMap ev-target.
func checkEvent(t *testing.T, r *runner, ns string) {
	target := r.mustFetch(t, configmapsGVR, ns, "ev-target")
	list, err := r.dyn.Resource(eventsGVR).Namespace(ns).List(t.Context(),
		metav1.ListOptions{FieldSelector: "involvedObject.name=ev-target"})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("events about ev-target: %v (err %v), want 1", list, err)
	}
	ev := list.Items[0].Object
	if count, _, _ := unstructured.NestedInt64(ev, "count"); count != 3 {
		t.Errorf("count = %d, want 3: the repeats aggregated into one Event", count)
	}
	got := map[string]string{}
	for _, f := range [][]string{{"type"}, {"reason"}, {"message"}, {"source", "component"},
		{"involvedObject", "apiVersion"}, {"involvedObject", "kind"}, {"involvedObject", "namespace"},
		{"involvedObject", "name"}, {"involvedObject", "uid"}} {
		got[strings.Join(f, ".")], _, _ = unstructured.NestedString(ev, f...)
	}
	want := map[string]string{"type": "Warning", "reason": "Tested", "message": "hello from a script",
		"source.component": "jsinformer", "involvedObject.apiVersion": "v1", "involvedObject.kind": "ConfigMap",
		"involvedObject.namespace": ns, "involvedObject.name": "ev-target", "involvedObject.uid": string(target.GetUID())}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("event = %v\nwant    %v", got, want)
	}
}

func TestK8sErrorReasons(t *testing.T) {
	t.Parallel()
	ns := uniqueName("k8s-errors")
	r := startEngine(t, map[string]string{"cases.js": caseScript(ns)}, nil)
	r.namespace(t, ns)
	runCases(t, r, ns, []scriptCase{
		{name: "not-found", code: `k8s.get("configmaps", ns, "missing");`, want: "error 404 NotFound"},
		{name: "already-exists", setup: createCM("exists", nil),
			code: `k8s.create("configmaps", { metadata: { name: "exists", namespace: ns } });`, want: "error 409 AlreadyExists"},
		{name: "conflict", setup: createCM("stale", map[string]any{"v": "1"}),
			code: `const c = util.clone(k8s.get("configmaps", ns, "stale"));
			k8s.patch("configmaps", ns, "stale", { data: { v: "2" } });
			c.data.v = "3";
			k8s.update("configmaps", c);`,
			want: "error 409 Conflict", check: wantData("stale", map[string]string{"v": "2"})},
		{name: "invalid", code: `k8s.create("configmaps", { metadata: { name: "Not_Valid", namespace: ns } });`,
			want: "error 422 Invalid"},
		{name: "forbidden-terminating-namespace", setup: func(t *testing.T, r *runner, ns string) {
			// Without a controller-manager a deleted namespace stays Terminating for good.
			doomed := r.namespace(t, ns+"-doomed")
			if err := r.dyn.Resource(namespacesGVR).Delete(t.Context(), doomed, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { finalizeNamespace(t, r, doomed) })
		}, code: `k8s.create("configmaps", { metadata: { name: "late", namespace: ns + "-doomed" } });`,
			want: "error 403 Forbidden", check: func(t *testing.T, r *runner, _ string) {
				// No grant mends a write into a terminating namespace: no permission is missing.
				if _, refused := r.engine.Permissions(); len(refused) != 0 {
					t.Errorf("refused permissions %v, want none", refused)
				}
			}},
		{name: "bad-request", setup: createCM("badpatch", nil),
			code: `k8s.patch("configmaps", ns, "badpatch", "{not json", { type: "merge" });`, want: "error 400 BadRequest"},
		// Errors that never reached the server carry no code or reason.
		{name: "unknown-resource", code: `k8s.get("nosuchthings", ns, "x");`, want: "error undefined undefined",
			check: wantThrown("unknown-resource", `resolve resource "nosuchthings": unknown resource`)},
		{name: "namespace-required", code: `k8s.create("configmaps", { metadata: { name: "nowhere" } });`,
			want: "error undefined undefined", check: wantThrown("namespace-required", "namespace required: v1/configmaps is a namespaced resource")},
	})
}

func TestK8sForbiddenByRBAC(t *testing.T) {
	t.Parallel()
	ns := uniqueName("k8s-rbac")
	const user = "jsinformer-test-reader"
	client := admin(t)
	mustCreate(t, client, namespacesGVR, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
	grantReadConfigMaps(t, client, ns, user)
	r := startEngine(t, map[string]string{"cases.js": caseScript(ns)}, func(c *engine.Config) {
		c.RESTConfig = rest.CopyConfig(c.RESTConfig)
		c.RESTConfig.Impersonate = rest.ImpersonationConfig{UserName: user}
	})
	runCases(t, r, ns, []scriptCase{
		{name: "read-allowed", setup: createCM("readable", map[string]any{"v": "1"}),
			code: `return k8s.get("configmaps", ns, "readable").data.v;`, want: `ok "1"`},
		{name: "write-forbidden", code: `k8s.create("configmaps", { metadata: { name: "nope", namespace: ns } });`,
			want: "error 403 Forbidden", check: func(t *testing.T, r *runner, ns string) {
				eventually(t, "nope absent", r.gone(t, configmapsGVR, ns, "nope"))
				wantRefused(t, r, status.PermissionStatus{Script: "cases.js", Verb: "create", Resource: "configmaps", Namespace: ns,
					Why: "k8s.create", Grant: "kubectl create role NAME -n " + ns + " --verb=create --resource=configmaps", Refused: 1})
			}},
	})
}

// wantRefused checks that runner status lists a script's refused call with the rule to add.
func wantRefused(t *testing.T, r *runner, want status.PermissionStatus) {
	t.Helper()
	if got := r.engine.Status().Permissions; !slices.Contains(got, want) {
		t.Errorf("status permissions %+v, want %+v among them", got, want)
	}
}

// wantThrown checks the message of the error a case caught.
func wantThrown(name, want string) func(*testing.T, *runner, string) {
	return func(t *testing.T, r *runner, ns string) {
		recs := r.calls.find(call{Script: "cases.js", Object: ns + "/case-" + name, Handler: "onAdd"}.match)
		if len(recs) != 1 || !strings.Contains(logAttr(recs[0], "caught", "message"), want) {
			t.Fatalf("calls %v, want one that caught a message containing %q", recs, want)
		}
	}
}

// grantReadConfigMaps lets user get, list and watch ConfigMaps in ns, and nothing else.
func grantReadConfigMaps(t *testing.T, client dynamic.Interface, ns, user string) {
	t.Helper()
	rbac := func(resource string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: resource}
	}
	mustCreate(t, client, rbac("roles"), map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
		"metadata": map[string]any{"name": "read-configmaps", "namespace": ns},
		"rules":    []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": []any{"get", "list", "watch"}}}})
	mustCreate(t, client, rbac("rolebindings"), map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
		"metadata": map[string]any{"name": "read-configmaps", "namespace": ns},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "read-configmaps"},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}}})
}

// finalizeNamespace does the namespace controller's last step, which this control plane has
// no controller-manager for: a terminating namespace with no finalizers left is removed, so
// the tests after this one do not share the cluster with it.
func finalizeNamespace(t *testing.T, r *runner, name string) {
	ns := r.dyn.Resource(namespacesGVR)
	ctx := context.WithoutCancel(t.Context())
	obj, err := ns.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Errorf("get namespace %s: %v", name, err)
		return
	}
	if err := unstructured.SetNestedStringSlice(obj.Object, []string{}, "spec", "finalizers"); err != nil {
		t.Errorf("clear finalizers of %s: %v", name, err)
		return
	}
	if _, err := ns.Update(ctx, obj, metav1.UpdateOptions{}, "finalize"); err != nil {
		t.Errorf("finalize namespace %s: %v", name, err)
		return
	}
	if _, err := ns.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s after finalize: %v, want NotFound", name, err)
	}
}
