package engine_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/jsinformer/jsinformer/engine"
)

// wantDryRunLog checks that the engine reported the write as one it would have made.
func wantDryRunLog(verb, name string) func(*testing.T, *runner, string) {
	return func(t *testing.T, r *runner, ns string) {
		if len(r.log.find(msg("dry-run: would write", "verb", verb, "namespace", ns, "name", name))) == 0 {
			t.Fatalf("no dry-run record for %s %s/%s\n%s", verb, ns, name, r.log.dump())
		}
	}
}

func wantAbsent(name string) func(*testing.T, *runner, string) {
	return func(t *testing.T, r *runner, ns string) {
		if _, err := r.fetch(t, configmapsGVR, ns, name); err == nil {
			t.Fatalf("%s was stored despite --dry-run", name)
		}
	}
}

// wantUnchangedDeployment checks that a Deployment still has the server's defaults: no status
// was written.
func wantUnchangedDeployment(name string) func(*testing.T, *runner, string) {
	return func(t *testing.T, r *runner, ns string) {
		u := r.mustFetch(t, deploymentsGVR, ns, name)
		if status, _, _ := unstructured.NestedMap(u.Object, "status"); len(status) > 0 {
			t.Fatalf("%s status = %v, want none written", name, status)
		}
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	ns := uniqueName("dryrun")
	r := startEngine(t, map[string]string{"cases.js": caseScript(ns)}, func(c *engine.Config) { c.DryRun = true })
	r.namespace(t, ns)
	r.create(t, configmapsGVR, configmap(ns, "existing", nil, map[string]any{"v": "1"}))
	r.create(t, deploymentsGVR, deployment(ns, "dep", "nginx:1.27", 1))
	unchanged := wantData("existing", map[string]string{"v": "1"})
	runCases(t, r, ns, []scriptCase{
		{name: "read", code: `return k8s.get("configmaps", ns, "existing").data.v;`, want: `ok "1"`},
		{name: "create", code: `return k8s.create("configmaps", { metadata: { name: "dry-new", namespace: ns } }).metadata.name;`,
			want: `ok "dry-new"`, check: both(wantAbsent("dry-new"), wantDryRunLog("create", "dry-new"))},
		{name: "update", code: `const c = util.clone(k8s.get("configmaps", ns, "existing")); c.data.v = "2";
			return k8s.update("configmaps", c).data.v;`,
			want: `ok "2"`, check: both(unchanged, wantDryRunLog("update", "existing"))},
		{name: "patch", code: `return k8s.patch("configmaps", ns, "existing", { data: { v: "3" } }).data.v;`,
			want: `ok "3"`, check: both(unchanged, wantDryRunLog("patch", "existing"))},
		{name: "apply", code: `return k8s.patch("configmaps", ns, "dry-applied", { apiVersion: "v1", kind: "ConfigMap",
			  metadata: { name: "dry-applied", namespace: ns }, data: { a: "1" } }, { type: "apply" }).data.a;`,
			want: `ok "1"`, check: both(wantAbsent("dry-applied"), wantDryRunLog("patch", "dry-applied"))},
		{name: "delete", setup: createCM("dry-doomed", nil),
			code: `k8s.delete("configmaps", ns, "dry-doomed", { propagationPolicy: "Background" });`, want: "ok undefined",
			check: both(wantData("dry-doomed", nil), wantDryRunLog("delete", "dry-doomed"))},
		{name: "update-status", code: `const d = util.clone(k8s.get("deployments", ns, "dep")); d.status = { collisionCount: 5 };
			return k8s.updateStatus("deployments", d).status.collisionCount;`,
			want: "ok 5", check: both(wantUnchangedDeployment("dep"), wantDryRunLog("updateStatus", "dep"))},
		{name: "patch-status", code: `return k8s.patchStatus("deployments", ns, "dep", { status: { collisionCount: 6 } }).status.collisionCount;`,
			want: "ok 6", check: both(wantUnchangedDeployment("dep"), wantDryRunLog("patchStatus", "dep"))},
		{name: "event", setup: createCM("dry-event-target", nil),
			code: `k8s.event(k8s.get("configmaps", ns, "dry-event-target"), "Normal", "Tried", "only a dry run");`,
			want: "ok undefined", check: func(t *testing.T, r *runner, ns string) {
				list, err := r.dyn.Resource(eventsGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{})
				if err != nil || len(list.Items) > 0 {
					t.Fatalf("events stored despite --dry-run: %v (err %v)", list.Items, err)
				}
				if got := r.log.find(msg("dry-run: would write", "verb", "event", "reason", "Tried", "message", "only a dry run")); len(got) != 1 {
					t.Fatalf("dry-run log of the event: %v, want one line with its reason and message", got)
				}
			}},
		// The server still validates: an invalid write fails as without --dry-run, and is not
		// reported as one that would have been made.
		{name: "invalid", code: `k8s.create("configmaps", { metadata: { name: "Not_Valid", namespace: ns } });`,
			want: "error 422 Invalid", check: func(t *testing.T, r *runner, ns string) {
				if got := r.log.find(msg("dry-run: would write", "name", "Not_Valid")); len(got) > 0 {
					t.Fatalf("rejected write logged as would-write: %v", got)
				}
			}},
	})
}
