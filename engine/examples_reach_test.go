package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestExample12OwnedConfigMaps(t *testing.T) {
	t.Parallel()
	r := startEngine(t, example(t, "12-owned-configmaps.js"), asGenerated(t))
	defer r.checkGranted(t)
	ns := r.namespace(t, uniqueName("ex12"))
	d := r.create(t, deploymentsGVR, deployment(ns, "web", "nginx:1.27", 1))
	owned := func(name string) map[string]any {
		cm := configmap(ns, name, nil, map[string]any{"k": "v"})
		setOwner(cm, d)
		return cm
	}
	r.create(t, configmapsGVR, owned("a"))
	r.create(t, configmapsGVR, owned("b"))
	r.create(t, configmapsGVR, configmap(ns, "unowned", nil, nil))
	wantCount := func(want string) {
		t.Helper()
		eventually(t, "owned-configmaps = "+want, func() error {
			got, _, _ := unstructuredString(r.mustFetch(t, deploymentsGVR, ns, "web").Object, "metadata", "annotations", "jsinformer.io/owned-configmaps")
			if got != want {
				return fmt.Errorf("annotation = %q", got)
			}
			return nil
		})
	}
	wantCount("2")
	r.delete(t, configmapsGVR, ns, "a") // the delete enqueues the owner too
	wantCount("1")
	if failed := handlerErrors(r, "12-owned-configmaps.js", "reconcile"); failed > 0 {
		t.Errorf("reconcile failed %d times", failed) // a ConfigMap's own key would have
	}
}

// The report runs every minute; the test makes it every second to see it run twice.
func TestExample13ScheduleReport(t *testing.T) {
	t.Parallel()
	src := example(t, "13-schedule-report.js")
	name := "13-schedule-report.js"
	if !strings.Contains(src[name], `every: "1m"`) {
		t.Fatal(`the example no longer says every: "1m"`)
	}
	src[name] = strings.Replace(src[name], `every: "1m"`, `every: "1s"`, 1)
	pre := startEngine(t, nil, nil)
	ns := pre.namespace(t, uniqueName("ex13"))
	pre.create(t, deploymentsGVR, deployment(ns, "a", "nginx:1.27", 1))
	pre.create(t, deploymentsGVR, deployment(ns, "b", "nginx:1.27", 1))
	r := startEngine(t, src, asGenerated(t))
	defer r.checkGranted(t)
	// The report is a log line (schedules leave no trace record): the example's behaviour.
	r.log.waitFor(t, "two reports counting the namespace's deployments", 2, func(rec record) bool {
		return rec.msg == "deployments per namespace" && strings.Contains(rec.attrs["counts"], `"`+ns+`":2`)
	})
	if got := handlerErrors(r, name); got > 0 {
		t.Errorf("%d calls failed", got)
	}
}

func TestExample14WidgetOperator(t *testing.T) {
	t.Parallel()
	pre := startEngine(t, nil, nil)
	applyWidgetCRD(t, pre)
	r := startEngine(t, example(t, "14-widget-operator.js"), asGenerated(t))
	defer r.checkGranted(t)
	ns := r.namespace(t, uniqueName("ex14"))
	r.create(t, widgetsGVR, map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "dial", "namespace": ns}, "spec": map[string]any{"size": int64(3), "color": "blue"}})
	widget := func() map[string]any { return r.mustFetch(t, widgetsGVR, ns, "dial").Object }
	eventually(t, "the widget is Ready with its finalizer", func() error {
		w := widget()
		conds, _, _ := unstructured.NestedSlice(w, "status", "conditions")
		fins, _, _ := unstructured.NestedStringSlice(w, "metadata", "finalizers")
		if len(conds) != 1 || fmt.Sprint(conds[0].(map[string]any)["status"]) != "True" || fmt.Sprint(fins) != "[example.com/widget-config]" {
			return fmt.Errorf("conditions %v, finalizers %v", conds, fins)
		}
		return nil
	})
	cm := r.mustFetch(t, configmapsGVR, ns, "dial-config")
	if owners := cm.GetOwnerReferences(); len(owners) != 1 || owners[0].Name != "dial" || owners[0].Controller == nil || !*owners[0].Controller {
		t.Errorf("owner references %v, want the widget as controller", owners)
	}
	transition, _, _ := unstructured.NestedString(widget(), "status", "conditions", "0", "lastTransitionTime")

	r.patch(t, widgetsGVR, ns, "dial", `{"spec":{"size":5}}`)
	eventually(t, "the ConfigMap follows the spec", func() error {
		if got, _, _ := unstructuredString(r.mustFetch(t, configmapsGVR, ns, "dial-config").Object, "data", "size"); got != "5" {
			return fmt.Errorf("size %q", got)
		}
		return nil
	})
	r.delete(t, configmapsGVR, ns, "dial-config") // deleted by hand: the owner mapping puts it back
	eventually(t, "the ConfigMap is back", func() error {
		_, err := r.fetch(t, configmapsGVR, ns, "dial-config")
		return err
	})
	conds, _, _ := unstructured.NestedSlice(widget(), "status", "conditions")
	if got := conds[0].(map[string]any)["lastTransitionTime"]; got != transition && transition != "" {
		t.Errorf("lastTransitionTime moved from %s to %v while the status stayed True", transition, got)
	}
	r.delete(t, widgetsGVR, ns, "dial")
	eventually(t, "the widget and its ConfigMap are gone", func() error {
		if _, err := r.fetch(t, widgetsGVR, ns, "dial"); err == nil {
			return fmt.Errorf("the widget is still there")
		}
		if _, err := r.fetch(t, configmapsGVR, ns, "dial-config"); err == nil {
			return fmt.Errorf("the ConfigMap is still there")
		}
		return nil
	})
	if failed := handlerErrors(r, "14-widget-operator.js", "reconcile"); failed > 0 {
		t.Errorf("reconcile failed %d times", failed)
	}
}
