package deploy_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/permissions"
)

// TestStartupCheckNamesMissingPermission grants the shipped scripts the generated RBAC less
// one verb (delete on Jobs, which 07-ttl-cleanup needs), runs them as the ServiceAccount, and
// checks the runner's own report: the start-up check names that script, verb and resource and
// nothing else; the script's refused call is recorded with the rule to add; and once the
// verb is granted again the runner notices within its check interval, without a restart.
func TestStartupCheckNamesMissingPermission(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	suffix := uniqueSuffix(t)
	ns := "deploy-rbaccheck-" + suffix
	objs := renderOverlay(t, ns, suffix)
	admin := newCluster(t, cp.Config)
	admin.createNamespace(t, objs)
	role := find(t, objs, "ClusterRole")
	full := role.DeepCopy()
	withoutVerb(t, role, "jobs", "delete")
	for _, kind := range rbacKinds {
		obj := find(t, objs, kind)
		if err := admin.create(t, obj, false); err != nil {
			t.Fatalf("create %s: %v", kind, err)
		}
		if obj.GetNamespace() == "" {
			t.Cleanup(func() { _ = admin.resource(t, obj).Delete(context.Background(), obj.GetName(), metav1.DeleteOptions{}) })
		}
	}
	sa := serviceAccountConfig(t, cp.Config, ns, find(t, objs, "ServiceAccount").GetName())
	logs := &syncBuffer{}
	e, err := engine.New(engine.Config{RESTConfig: sa, ScriptsDir: "scripts", Logger: slog.New(slog.NewTextHandler(logs, nil)),
		PermissionCheckInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("engine: %v", err)
		}
	}()

	want := permissions.Need{Script: "07-ttl-cleanup.js", Group: "batch", Resource: "jobs", Verb: "delete", Why: "k8s.delete at 07-ttl-cleanup.js:58"}
	poll(t, "the start-up check to report the missing verb", logs, func() bool {
		missing, _ := e.Permissions()
		return slices.Equal(missing, []permissions.Need{want})
	})
	warn := `level=WARN msg="the runner lacks a permission a script needs" script=07-ttl-cleanup.js verb=delete resource=jobs.batch namespace="" ` +
		`why="k8s.delete at 07-ttl-cleanup.js:58" grant="kubectl create clusterrole NAME --verb=delete --resource=jobs.batch"`
	if !strings.Contains(logs.String(), warn) {
		t.Errorf("no WARN %s\n%s", warn, logs)
	}

	createExpiredJob(t, kubernetes.NewForConfigOrDie(cp.Config), ns)
	poll(t, "the refused delete to be recorded", logs, func() bool {
		_, refused := e.Permissions()
		return slices.ContainsFunc(refused, func(f permissions.Forbidden) bool {
			return f.Script == "07-ttl-cleanup.js" && f.Verb == "delete" && f.GroupResource() == "jobs.batch" && f.Namespace == ns
		})
	})

	full.SetResourceVersion("")
	current, err := admin.resource(t, full).Get(t.Context(), full.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	full.SetResourceVersion(current.GetResourceVersion())
	if _, err := admin.resource(t, full).Update(t.Context(), full, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the grant to be noticed without a restart", logs, func() bool {
		missing, _ := e.Permissions()
		return len(missing) == 0
	})
}

// withoutVerb removes verb from the rule of obj (a ClusterRole) on resource.
func withoutVerb(t *testing.T, obj *unstructured.Unstructured, resource, verb string) {
	t.Helper()
	rules, _, _ := unstructured.NestedSlice(obj.Object, "rules")
	for _, r := range rules {
		rule := r.(map[string]any)
		resources, _, _ := unstructured.NestedStringSlice(rule, "resources")
		verbs, _, _ := unstructured.NestedStringSlice(rule, "verbs")
		if slices.Equal(resources, []string{resource}) && slices.Contains(verbs, verb) {
			verbs = slices.DeleteFunc(verbs, func(v string) bool { return v == verb })
			_ = unstructured.SetNestedStringSlice(rule, verbs, "verbs")
			_ = unstructured.SetNestedSlice(obj.Object, rules, "rules")
			return
		}
	}
	t.Fatalf("%s %s has no rule granting %s on %s", obj.GetKind(), obj.GetName(), verb, resource)
}

func createExpiredJob(t *testing.T, client kubernetes.Interface, ns string) {
	t.Helper()
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "expired", Namespace: ns, Annotations: map[string]string{"jsinformer.io/ttl": "2000-01-01T00:00:00Z"}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "busybox.invalid/busybox"}}}}},
	}
	if _, err := client.BatchV1().Jobs(ns).Create(t.Context(), job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// poll waits for cond, failing with the logs after 30s.
func poll(t *testing.T, what string, logs *syncBuffer, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s\n%s", what, logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
