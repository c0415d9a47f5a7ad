package engine_test

import (
	"fmt"
	"strings"
	"testing"
)

func TestExample12OwnedConfigMaps(t *testing.T) {
	t.Parallel()
	r := startEngine(t, example(t, "12-owned-configmaps.js"), nil)
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
	if failed := r.log.find(msg("reconcile failed; will retry")); len(failed) > 0 {
		t.Errorf("reconcile failed: %v", failed) // a ConfigMap's own key would have
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
	r := startEngine(t, src, nil)
	r.log.waitFor(t, "two reports counting the namespace's deployments", 2, func(rec record) bool {
		return rec.msg == "deployments per namespace" && strings.Contains(rec.attrs["counts"], `"`+ns+`":2`)
	})
	if got := r.log.find(msg("script handler failed")); len(got) > 0 {
		t.Errorf("failures: %v", got)
	}
}
