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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/admission"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// TestRunnerSharesOneEntryForScriptsAlike runs the runner's engine and webhooks against
// kube-apiserver with three validating and two mutating scripts on ConfigMaps: one entry of
// each kind; the second validate's denial reaches the client, a create passing all is allowed
// with the two others' warnings and both mutations, chained; a removed script leaves the
// shared entry.
func TestRunnerSharesOneEntryForScriptsAlike(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	client := kubernetes.NewForConfigOrDie(cp.Config)
	ns, name := "adm-fanout-e2e", "jsinformer-fanout-e2e"
	admissionNamespace(t, client, ns, name)
	dir := t.TempDir()
	watch := fmt.Sprintf(`watch: { resource: "v1/configmaps", namespace: %q },`, ns)
	for file, body := range map[string]string{
		"a.js":      `validate() { return { allowed: true, warnings: ["from a"] }; }`,
		"team/b.js": `validate(obj) { if ((obj.metadata.labels || {}).deny) return { allowed: false, message: "b says no" }; }`,
		"c.js":      `validate() { return { allowed: true, warnings: ["from c"] }; }`,
		"m1.js":     `mutate(obj) { const out = util.clone(obj); out.metadata.labels = { ...out.metadata.labels, first: "1" }; return out; }`,
		"m2.js":     `mutate(obj) { const out = util.clone(obj); out.metadata.labels = { ...out.metadata.labels, second: "saw-" + (obj.metadata.labels || {}).first }; return out; }`,
	} {
		path := filepath.Join(dir, file)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("export default { "+watch+" "+body+" };\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	startAdmissionRunner(t, cp.Config, dir, name, freePort(t))

	paths := func() (validating, mutating []string) {
		vwc, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), name, metav1.GetOptions{})
		if err == nil {
			for _, w := range vwc.Webhooks {
				validating = append(validating, (*w.ClientConfig.URL)[strings.LastIndex(*w.ClientConfig.URL, "/validate"):])
			}
		}
		mwc, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(t.Context(), name, metav1.GetOptions{})
		if err == nil {
			for _, w := range mwc.Webhooks {
				mutating = append(mutating, (*w.ClientConfig.URL)[strings.LastIndex(*w.ClientConfig.URL, "/mutate"):])
			}
		}
		return validating, mutating
	}
	waitPaths := func(wantV, wantM []string) {
		t.Helper()
		var v, m []string
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if v, m = paths(); slices.Equal(v, wantV) && slices.Equal(m, wantM) {
				return
			}
		}
		t.Fatalf("entries' paths %q and %q, want %q and %q", v, m, wantV, wantM)
	}
	waitPaths([]string{admission.GroupPath("validate", "Fail", []string{"a.js", "c.js", "team/b.js"})}, []string{admission.GroupPath("mutate", "Fail", []string{"m1.js", "m2.js"})})

	seen := &warnings{}
	cfg := rest.CopyConfig(cp.Config)
	cfg.WarningHandler = seen
	cms := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(ns)
	cm := func(n string, labels map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: labels}}
	}
	// The configurations take effect once the API server's informers see them: poll.
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, err = cms.Create(t.Context(), cm("denied", map[string]string{"deny": "yes"}), metav1.CreateOptions{}); err != nil {
			break
		}
		_ = cms.Delete(t.Context(), "denied", metav1.DeleteOptions{})
	}
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "team/b.js: b says no") {
		t.Fatalf("a ConfigMap team/b.js denies: %v, want its message", err)
	}
	before := len(seen.list())
	got, err := cms.Create(t.Context(), cm("passes", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w := seen.list()[before:]; !slices.Equal(w, []string{"from a", "from c"}) {
		t.Errorf("warnings seen by the client %q, want a.js's and c.js's in order", w)
	}
	if got.Labels["first"] != "1" || got.Labels["second"] != "saw-1" {
		t.Errorf("stored labels %v, want m1.js's and m2.js's, m2.js having seen m1.js's", got.Labels)
	}

	if err := os.Remove(filepath.Join(dir, "c.js")); err != nil {
		t.Fatal(err)
	}
	waitPaths([]string{admission.GroupPath("validate", "Fail", []string{"a.js", "team/b.js"})}, []string{admission.GroupPath("mutate", "Fail", []string{"m1.js", "m2.js"})})
}
