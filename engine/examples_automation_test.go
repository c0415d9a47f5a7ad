package engine_test

import (
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/inspection"
)

// Tests of the automation examples 05-08, each running the example file unchanged. They act
// on objects cluster-wide, as the examples would in a real cluster, so each uses objects of
// its own namespaces and only asserts about those.

func TestExample05ReplicateSecret(t *testing.T) {
	t.Parallel()
	// The example copies into every namespace of the shared control plane (a hundred and
	// more while this package runs): each namespace another test creates queues two applies
	// on the script's one worker ahead of this test's events, and its onDelete deletes the
	// copies one call at a time. Under -race and CI's load that backlog and that loop outlast
	// eventually's 15 s and the default 5 s handler timeout (CI, twice), hence a minute each.
	wait := func(what string, cond func() error) { t.Helper(); eventuallyWithin(t, time.Minute, what, cond) }
	generated := asGenerated(t)
	r := startEngine(t, example(t, "05-replicate-secret.js"), func(c *engine.Config) {
		generated(c)
		c.HandlerTimeout = time.Minute
	})
	defer r.checkGranted(t)
	src, early := r.namespace(t, uniqueName("ex05-src")), r.namespace(t, uniqueName("ex05-early"))
	for _, name := range []string{"ex05-token", "ex05-unlabel"} {
		r.create(t, secretsGVR, map[string]any{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": name, "namespace": src,
				"labels": map[string]any{"jsinformer.io/replicate": "true"}},
			"stringData": map[string]any{"token": "one"}})
		wait(name+" reaches an existing namespace", r.secretIs(t, src, early, name, "token=one"))
	}
	r.patch(t, secretsGVR, src, "ex05-unlabel", `{"metadata":{"labels":{"jsinformer.io/replicate":null}}}`)
	wait("an unlabelled source's copy is deleted", r.gone(t, secretsGVR, early, "ex05-unlabel"))

	r.patch(t, secretsGVR, src, "ex05-token", `{"stringData":{"token":"two","extra":"x"}}`)
	wait("the update propagates", r.secretIs(t, src, early, "ex05-token", "extra=x token=two"))

	late := r.namespace(t, uniqueName("ex05-late"))
	wait("a new namespace gets a copy", r.secretIs(t, src, late, "ex05-token", "extra=x token=two"))
	if _, err := r.fetch(t, secretsGVR, src, "ex05-token"); err != nil {
		t.Fatalf("source gone: %v", err)
	}

	r.delete(t, secretsGVR, src, "ex05-token")
	for _, ns := range []string{early, late} {
		wait("the copy in "+ns+" is deleted", r.gone(t, secretsGVR, ns, "ex05-token"))
	}
}

// secretIs is a condition: the Secret exists in ns with this data ("k=v" pairs, sorted by
// key) and marks itself as a replica of the one in src.
func (r *runner) secretIs(t *testing.T, src, ns, name, want string) func() error {
	return func() error {
		u, err := r.fetch(t, secretsGVR, ns, name)
		if err != nil {
			return err
		}
		data, _, _ := unstructured.NestedStringMap(u.Object, "data")
		got := ""
		for _, k := range slices.Sorted(maps.Keys(data)) {
			v, _ := base64.StdEncoding.DecodeString(data[k])
			got += fmt.Sprintf(" %s=%s", k, v)
		}
		if got != " "+want {
			return fmt.Errorf("%s/%s data =%s, want %s", ns, name, got, want)
		}
		if from := u.GetAnnotations()["jsinformer.io/replica-of"]; from != src+"/"+name {
			return fmt.Errorf("%s/%s replica-of = %q", ns, name, from)
		}
		return nil
	}
}

func TestExample06RestartOnConfigChange(t *testing.T) {
	t.Parallel()
	r := startEngine(t, example(t, "06-restart-on-config-change.js"), asGenerated(t))
	defer r.checkGranted(t)
	ns := r.namespace(t, uniqueName("ex06"))
	r.create(t, configmapsGVR, configmap(ns, "settings", nil, map[string]any{"v": "1"}))
	r.create(t, deploymentsGVR, mounting(deployment(ns, "app", "nginx:1.27", 1), "settings"))
	r.create(t, deploymentsGVR, mounting(deployment(ns, "waiter", "nginx:1.27", 1), "later"))
	r.create(t, deploymentsGVR, deployment(ns, "bystander", "nginx:1.27", 1))

	first := r.waitAnnotations(t, ns, "app", "the first hash is recorded without a restart", func(hash, restarted string) bool {
		return hash != "" && restarted == ""
	})
	r.patch(t, configmapsGVR, ns, "settings", `{"data":{"v":"2"}}`)
	r.waitAnnotations(t, ns, "app", "a data change restarts the deployment", func(hash, restarted string) bool {
		return hash != first.hash && restarted != ""
	})
	restarted := call{Script: "06-restart-on-config-change.js", Logged: "restarted deployment"}
	r.calls.waitFor(t, "restart logged", 1, call{Script: restarted.Script, Logged: restarted.Logged,
		Attrs: map[string]string{"deployment": ns + "/app", "configMaps": "settings"}}.match)

	r.create(t, configmapsGVR, configmap(ns, "later", nil, map[string]any{"v": "1"}))
	r.waitAnnotations(t, ns, "waiter", "a ConfigMap created late is recorded, not a restart", func(hash, restarted string) bool {
		return hash != "" && restarted == ""
	})
	if got := r.calls.find(restarted.match); len(got) != 1 {
		t.Fatalf("restarts = %v, want only app's after its data change", got)
	}
	if a := r.mustFetch(t, deploymentsGVR, ns, "bystander").GetAnnotations(); len(a) > 0 {
		t.Fatalf("a Deployment mounting no ConfigMap was annotated: %v", a)
	}
}

// mounting adds a volume of ConfigMap cm to a Deployment's pod template.
func mounting(d map[string]any, cm string) map[string]any {
	pod := d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	pod["volumes"] = []any{map[string]any{"name": "config", "configMap": map[string]any{"name": cm}}}
	return d
}

// configStamps are example 06's annotations on a Deployment.
type configStamps struct{ hash, restarted string }

// waitAnnotations polls a Deployment until ok accepts its config hash and pod template
// restart stamp.
func (r *runner) waitAnnotations(t *testing.T, ns, name, what string, ok func(hash, restarted string) bool) configStamps {
	t.Helper()
	var got configStamps
	eventually(t, what, func() error {
		u := r.mustFetch(t, deploymentsGVR, ns, name)
		restarted, _, _ := unstructured.NestedString(u.Object, "spec", "template", "metadata", "annotations", "jsinformer.io/restartedAt")
		got = configStamps{hash: u.GetAnnotations()["jsinformer.io/config-hash"], restarted: restarted}
		if !ok(got.hash, got.restarted) {
			return fmt.Errorf("%s/%s: %+v", ns, name, got)
		}
		return nil
	})
	return got
}

func TestExample07TTLCleanup(t *testing.T) {
	t.Parallel()
	r := startEngine(t, example(t, "07-ttl-cleanup.js"), asGenerated(t))
	defer r.checkGranted(t)
	ns := r.namespace(t, uniqueName("ex07"))
	ttl := func(v string) map[string]any { return map[string]any{"jsinformer.io/ttl": v} }
	for name, annotations := range map[string]map[string]any{
		"short": ttl("1s"), "past": ttl("2000-01-01T00:00:00Z"), "long": ttl("1h"),
		"future": ttl("2999-01-01T00:00:00Z"), "bogus": ttl("5"), "plain": nil,
	} {
		cm := configmap(ns, name, nil, nil)
		cm["metadata"].(map[string]any)["annotations"] = annotations
		r.create(t, configmapsGVR, cm)
	}
	r.create(t, jobsGVR, map[string]any{"apiVersion": "batch/v1", "kind": "Job",
		"metadata": map[string]any{"name": "short", "namespace": ns, "annotations": ttl("1500ms")},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"restartPolicy": "Never", "containers": []any{map[string]any{"name": "main", "image": "busybox:1.36"}}}}}})

	eventually(t, "an expired time is deleted", r.gone(t, configmapsGVR, ns, "past"))
	// Nothing changes these after creation: only requeueAfter can bring reconcile back.
	eventually(t, "a 1s ttl is deleted once it expires", r.gone(t, configmapsGVR, ns, "short"))
	eventually(t, "a Job's ttl is honoured", r.gone(t, jobsGVR, ns, "short"))
	r.calls.waitFor(t, "the bogus ttl reported", 1, call{Script: "07-ttl-cleanup.js", Event: "reconcile", Object: ns + "/bogus",
		Logged: "ignoring a ttl that is neither a duration nor a time", Attrs: map[string]string{"object": ns + "/bogus"}}.match)
	for _, name := range []string{"long", "future", "bogus", "plain"} {
		r.mustFetch(t, configmapsGVR, ns, name)
	}
}

// TestExample08DefaultTeamLabel is not parallel: example 08 labels every Deployment in the
// cluster, and other tests' Deployments must not change under them. Parallel tests only start
// once the sequential ones are done.
func TestExample08DefaultTeamLabel(t *testing.T) {
	ns := uniqueName("ex08")
	client := admin(t)
	mustCreate(t, client, namespacesGVR, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
	mustCreate(t, client, deploymentsGVR, deployment(ns, "before-start", "nginx:1.27", 1))
	r := startEngine(t, example(t, "08-default-team-label.js"), asGenerated(t))
	defer r.checkGranted(t)
	r.create(t, deploymentsGVR, deployment(ns, "after-start", "nginx:1.27", 1))
	staffed := deployment(ns, "staffed", "nginx:1.27", 1)
	staffed["metadata"].(map[string]any)["labels"] = map[string]any{"team": "payments"}
	r.create(t, deploymentsGVR, staffed)

	for _, name := range []string{"before-start", "after-start"} {
		eventually(t, name+" is labelled", func() error {
			if got := r.mustFetch(t, deploymentsGVR, ns, name).GetLabels()["team"]; got != "unassigned" {
				return fmt.Errorf("%s team = %q, want unassigned", name, got)
			}
			return nil
		})
	}
	const script = "08-default-team-label.js"
	r.calls.waitFor(t, "labelling logged", 1, call{Script: script, Object: ns + "/after-start",
		Logged: "labelled deployment", Attrs: map[string]string{"deployment": ns + "/after-start"}}.match)
	if got := r.mustFetch(t, deploymentsGVR, ns, "staffed").GetLabels()["team"]; got != "payments" {
		t.Fatalf("staffed team = %q, want payments kept", got)
	}
	patchedStaffed := func(rec inspection.TraceRecord) bool {
		return rec.Script == script && slices.ContainsFunc(rec.Writes, func(w inspection.APIWrite) bool {
			return w.Namespace == ns && w.Name == "staffed"
		})
	}
	if got := r.calls.find(patchedStaffed); len(got) > 0 {
		t.Fatalf("a Deployment that has a team was patched: %v", got)
	}
}
