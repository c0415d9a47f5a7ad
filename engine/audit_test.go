package engine_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

var (
	crdGVR           = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	reportGVR        = schema.GroupVersionResource{Group: "openreports.io", Version: "v1alpha1", Resource: "reports"}
	clusterReportGVR = schema.GroupVersionResource{Group: "openreports.io", Version: "v1alpha1", Resource: "clusterreports"}
)

// installReportCRDs installs deploy/crds/openreports.yaml, waits until reports are served, and
// deletes every report of the runner when the test ends (not for parallel tests: see
// installReportCRDsOnly).
func installReportCRDs(t *testing.T, dyn dynamic.Interface) {
	t.Helper()
	t.Cleanup(func() { deleteReports(t, dyn) }) // after the engine stopped: cleanups run last first
	installReportCRDsOnly(t, dyn)
}

// installReportCRDsOnly installs deploy/crds/openreports.yaml and waits until reports are served.
func installReportCRDsOnly(t *testing.T, dyn dynamic.Interface) {
	t.Helper()
	data, err := os.ReadFile("../deploy/crds/openreports.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(data), "\n---\n")[1:] {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("parse CRD: %v", err)
		}
		_, err := dyn.Resource(crdGVR).Create(t.Context(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("install CRD: %v", err)
		}
	}
	waitFor(t, "reports served", func() bool {
		_, err := dyn.Resource(reportGVR).Namespace("default").List(t.Context(), metav1.ListOptions{})
		return err == nil
	})
}

// deleteReports deletes every report the runner wrote, so that the next test's writer starts
// from none (a writer deletes the reports it does not build).
func deleteReports(t *testing.T, dyn dynamic.Interface) {
	for _, gvr := range []schema.GroupVersionResource{reportGVR, clusterReportGVR} {
		list, err := dyn.Resource(gvr).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=jsinformer"})
		if err != nil {
			t.Errorf("list %s: %v", gvr.Resource, err)
			continue
		}
		for _, u := range list.Items {
			err := dyn.Resource(gvr).Namespace(u.GetNamespace()).Delete(context.Background(), u.GetName(), metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("delete %s %s/%s: %v", gvr.Resource, u.GetNamespace(), u.GetName(), err)
			}
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

const teamAudit = `export default {
  watch: { resource: "v1/configmaps", namespace: %q },
  validate(obj, ctx) {
    if (ctx.operation !== "AUDIT" && ctx.operation !== "CREATE" && ctx.operation !== "UPDATE") return;
    if (!obj.metadata.labels || !obj.metadata.labels.team) return { allowed: false, message: "label 'team' is required" };
  },
  admission: { audit: true, mode: "audit" },
};
`

// TestAuditReportsExistingObjects: a policy with audit on publishes a Report for the objects
// already there; fixing an object changes its result, deleting it removes it.
func TestAuditReportsExistingObjects(t *testing.T) {
	cp := controlplane.Require(t, env)
	dyn := dynamic.NewForConfigOrDie(cp.Config)
	installReportCRDs(t, dyn)
	r := startEngine(t, map[string]string{}, nil)
	ns := r.namespace(t, "audit-existing")
	r.create(t, configmapsGVR, configmap(ns, "bad", nil, nil))
	r.create(t, configmapsGVR, configmap(ns, "good", map[string]any{"team": "a"}, nil))
	r.write(t, "team.js", strings.ReplaceAll(teamAudit, "%q", `"`+ns+`"`))

	report := func() *unstructured.Unstructured {
		u, err := dyn.Resource(reportGVR).Namespace(ns).Get(t.Context(), "jsinformer-team-js", metav1.GetOptions{})
		if err != nil {
			return nil
		}
		return u
	}
	results := func(u *unstructured.Unstructured) map[string]string {
		out := map[string]string{}
		items, _, _ := unstructured.NestedSlice(u.Object, "results")
		for _, it := range items {
			m := it.(map[string]any)
			name := m["resources"].([]any)[0].(map[string]any)["name"].(string)
			out[name] = m["result"].(string)
			if m["policy"] != "team.js" {
				t.Errorf("policy = %v, want team.js", m["policy"])
			}
		}
		return out
	}
	var u *unstructured.Unstructured
	defer func() {
		if t.Failed() {
			t.Log(r.log.dump())
		}
	}()
	waitFor(t, "a report with bad failing and good passing", func() bool {
		u = report()
		return u != nil && results(u)["bad"] == "fail" && results(u)["good"] == "pass"
	})
	if fail, _, _ := unstructured.NestedInt64(u.Object, "summary", "fail"); fail != 1 {
		t.Errorf("summary.fail = %d, want 1", fail)
	}

	r.patch(t, configmapsGVR, ns, "bad", `{"metadata":{"labels":{"team":"b"}}}`)
	waitFor(t, "bad passing once fixed", func() bool { u = report(); return u != nil && results(u)["bad"] == "pass" })
	r.delete(t, configmapsGVR, ns, "good")
	waitFor(t, "good's result gone", func() bool { u = report(); _, has := results(u)["good"]; return u != nil && !has })

}
