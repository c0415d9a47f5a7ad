package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/admission"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// TestServiceWebhooksOfAnyScriptNameRegister: a runner with --webhook-service whose folder
// holds scripts named "Policy.js" and "team_a/a_b.js" (not DNS-1123 path segments) registers
// them with ok.js in one configuration kube-apiserver accepts; each entry's path decodes to its
// script. The Service need not resolve for the configuration to be accepted.
func TestServiceWebhooksOfAnyScriptNameRegister(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	client := kubernetes.NewForConfigOrDie(cp.Config)
	ns, name := "adm-svc-names", "jsinformer-svc-names"
	admissionNamespace(t, client, ns, name)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "team_a"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Each with another timeout: one entry each, not a shared one.
	for i, script := range []string{"ok.js", "Policy.js", "team_a/a_b.js"} {
		src := policyScript(ns, `    return;`, `{ failurePolicy: "Ignore", timeoutSeconds: `+strconv.Itoa(3+i)+` }`)
		if err := os.WriteFile(filepath.Join(dir, script), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	startAdmissionWith(t, cp.Config, dir, webhookFlags{addr: freePort(t), service: "jsinformer-system/runner", name: name}, nil)
	want := []string{"Policy.js", "ok.js", "team_a/a_b.js"}
	var got []string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		vwc, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			continue
		}
		got = nil
		for _, w := range vwc.Webhooks {
			if w.ClientConfig.Service == nil || w.ClientConfig.Service.Path == nil {
				t.Fatalf("entry %s has no Service path: %+v", w.Name, w.ClientConfig)
			}
			script, ok := admission.DecodeName(strings.TrimPrefix(*w.ClientConfig.Service.Path, admission.ValidatePrefix))
			if !ok {
				t.Fatalf("entry %s: path %q does not decode", w.Name, *w.ClientConfig.Service.Path)
			}
			got = append(got, script)
		}
		if slices.Equal(slices.Sorted(slices.Values(got)), want) {
			return
		}
	}
	t.Fatalf("registered entries for %q, want %q", got, want)
}
