package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// caseScript runs, for every ConfigMap labelled jsinformer-test/case in ns, the JavaScript in
// its data.code as a function of `ns`, and logs the outcome: "ok <JSON of the result>" or
// "error <e.code> <e.reason>" for a throw. That lets one engine run a table of k8s calls.
func caseScript(ns string) string {
	return fmt.Sprintf(`export default {
  watch: { resource: "v1/configmaps", namespace: %q, labelSelector: "jsinformer-test/case" },
  onAdd(cm) {
    const name = cm.metadata.labels["jsinformer-test/case"];
    let outcome;
    try {
      const out = new Function("ns", cm.data.code)(cm.metadata.namespace);
      outcome = "ok " + (out === undefined ? "undefined" : JSON.stringify(out));
    } catch (e) {
      outcome = "error " + e.code + " " + e.reason;
      log.info("caught", { case: name, message: String(e.message) });
    }
    log.info("result", { case: name, outcome });
  },
};
`, ns)
}

// scriptCase is one k8s call made by caseScript, checked in its trace record and on the server.
type scriptCase struct {
	name  string
	setup func(t *testing.T, r *runner, ns string) // objects the code expects; may be nil
	code  string                                   // JS function body; `ns` is the namespace
	want  string                                   // the outcome caseScript logs
	check func(t *testing.T, r *runner, ns string) // the server's state afterwards; may be nil
}

// runCases runs every case as a parallel subtest against r's caseScript on ns.
func runCases(t *testing.T, r *runner, ns string, cases []scriptCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.setup != nil {
				tc.setup(t, r, ns)
			}
			trigger := configmap(ns, "case-"+tc.name, map[string]any{"jsinformer-test/case": tc.name},
				map[string]any{"code": tc.code})
			r.create(t, configmapsGVR, trigger)
			rec := r.calls.waitFor(t, "case "+tc.name, 1, call{Script: "cases.js", Object: ns + "/case-" + tc.name, Handler: "onAdd"}.match)[0]
			if got := logAttr(rec, "result", "outcome"); got != tc.want {
				t.Fatalf("outcome = %q, want %q; the call: %s", got, tc.want, recordString(rec))
			}
			if tc.check != nil {
				tc.check(t, r, ns)
			}
		})
	}
}

func createCM(name string, data map[string]any) func(*testing.T, *runner, string) {
	return func(t *testing.T, r *runner, ns string) { r.create(t, configmapsGVR, configmap(ns, name, nil, data)) }
}

func createDeployment(name string) func(*testing.T, *runner, string) {
	return func(t *testing.T, r *runner, ns string) {
		r.create(t, deploymentsGVR, deployment(ns, name, "nginx:1.27", 1))
	}
}

// applyAs server-side applies ConfigMap data under another field manager.
func applyAs(manager, name string, data map[string]any) func(*testing.T, *runner, string) {
	return func(t *testing.T, r *runner, ns string) {
		u := &unstructured.Unstructured{Object: configmap(ns, name, nil, data)}
		if _, err := r.dyn.Resource(configmapsGVR).Namespace(ns).Apply(t.Context(), name, u,
			metav1.ApplyOptions{FieldManager: manager}); err != nil {
			t.Fatalf("apply %s as %s: %v", name, manager, err)
		}
	}
}

// wantData checks a ConfigMap's data on the server.
func wantData(name string, want map[string]string) func(*testing.T, *runner, string) {
	return func(t *testing.T, r *runner, ns string) {
		got, _, _ := unstructured.NestedStringMap(r.mustFetch(t, configmapsGVR, ns, name).Object, "data")
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s data on the server = %v, want %v", name, got, want)
		}
	}
}

// wantManager checks that manager/operation is among the object's managedFields entries.
func wantManager(name, managerOp string) func(*testing.T, *runner, string) {
	return func(t *testing.T, r *runner, ns string) {
		got := managers(r.mustFetch(t, configmapsGVR, ns, name))
		if !slices.Contains(strings.Split(got, ","), managerOp) {
			t.Fatalf("%s managedFields = %s, want an entry %s", name, got, managerOp)
		}
	}
}

func both(checks ...func(*testing.T, *runner, string)) func(*testing.T, *runner, string) {
	return func(t *testing.T, r *runner, ns string) {
		for _, c := range checks {
			c(t, r, ns)
		}
	}
}

// wantDeletingWith checks that a Foreground or Orphan delete left the object terminating with
// the garbage collector's finalizer (there is no controller-manager to finish the job).
func wantDeletingWith(name, finalizer string) func(*testing.T, *runner, string) {
	return func(t *testing.T, r *runner, ns string) {
		u := r.mustFetch(t, configmapsGVR, ns, name)
		if u.GetDeletionTimestamp() == nil || !slices.Contains(u.GetFinalizers(), finalizer) {
			t.Fatalf("%s: deletionTimestamp %v, finalizers %v; want deleting with %s",
				name, u.GetDeletionTimestamp(), u.GetFinalizers(), finalizer)
		}
	}
}

// wantDeployment checks spec.replicas and status.collisionCount of a Deployment.
func wantDeployment(name string, replicas, collisions int64) func(*testing.T, *runner, string) {
	return func(t *testing.T, r *runner, ns string) {
		u := r.mustFetch(t, deploymentsGVR, ns, name)
		gotReplicas, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		gotCollisions, _, _ := unstructured.NestedInt64(u.Object, "status", "collisionCount")
		if gotReplicas != replicas || gotCollisions != collisions {
			t.Fatalf("%s: replicas %d, collisionCount %d; want %d, %d", name, gotReplicas, gotCollisions, replicas, collisions)
		}
	}
}
