package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// TestRunnerAnswersASlowChainWithinTimeoutSeconds runs three mutations sharing one entry of
// timeoutSeconds 2 and failurePolicy Ignore against kube-apiserver: a.js labels, b.js and
// c.js spin on an object labelled slow. Each runtime's own timeout is 1.2 s, so the chain
// took 2.4 s and the API server, giving up at 2 s, dropped a.js's label with the rest. With
// one deadline for the chain, c.js is cut at it and the answer arrives in time: the object is
// stored with a.js's label and the client sees b.js's and c.js's failures as warnings.
func TestRunnerAnswersASlowChainWithinTimeoutSeconds(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	client := kubernetes.NewForConfigOrDie(cp.Config)
	ns, name := "adm-budget-e2e", "jsinformer-budget-e2e"
	admissionNamespace(t, client, ns, name)
	dir := t.TempDir()
	spin := `mutate(obj) { if ((obj.metadata.labels || {}).slow) for (;;) {} }`
	for file, body := range map[string]string{
		"a.js": `mutate(obj) { const out = util.clone(obj); out.metadata.labels = { ...out.metadata.labels, a: "yes" }; return out; }`,
		"b.js": spin, "c.js": spin,
	} {
		src := fmt.Sprintf(`export default { watch: { resource: "v1/configmaps", namespace: %q }, %s,
  admission: { operations: ["CREATE"], failurePolicy: "Ignore", timeoutSeconds: 2 } };`, ns, body)
		if err := os.WriteFile(filepath.Join(dir, file), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	startAdmissionRunner(t, cp.Config, dir, name, freePort(t))

	seen := &warnings{}
	cfg := rest.CopyConfig(cp.Config)
	cfg.WarningHandler = seen
	cms := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(ns)
	create := func(n string, labels map[string]string) *corev1.ConfigMap {
		t.Helper()
		got, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: labels}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	// The configuration takes effect once the API server's informers see it: poll.
	for i := 0; ; i++ {
		if create(fmt.Sprintf("probe-%d", i), nil).Labels["a"] == "yes" {
			break
		}
		if i == 300 {
			t.Fatal("a.js's label never appeared: the entry was not called")
		}
		time.Sleep(100 * time.Millisecond)
	}
	before := len(seen.list())
	start := time.Now()
	got := create("slow", map[string]string{"slow": "yes"})
	took := time.Since(start)
	t.Logf("the create through the slow chain took %s", took)
	if got.Labels["a"] != "yes" {
		t.Errorf("stored labels %v after %s: a.js's label was dropped (the answer came too late)", got.Labels, took)
	}
	warned := seen.list()[before:]
	if !slices.ContainsFunc(warned, func(w string) bool { return strings.HasPrefix(w, "b.js mutate failed:") }) ||
		!slices.ContainsFunc(warned, func(w string) bool {
			return strings.HasPrefix(w, "c.js mutate failed:") && strings.Contains(w, "at the admission request's deadline")
		}) {
		t.Errorf("warnings %q, want b.js's timeout and c.js's cut at the request's deadline", warned)
	}
}
