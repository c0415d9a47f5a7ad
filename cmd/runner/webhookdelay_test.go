package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// A stopping runner (its context ended, as on SIGTERM) keeps accepting new connections for
// --webhook-shutdown-delay and its scripts keep answering them, each answer closing its
// connection; then its listener closes. Without the delay the first new connection after
// the stop is refused.
func TestRunnerAnswersThroughTheShutdownDelay(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	ns, name := "adm-delay", "jsinformer-delay"
	admissionNamespace(t, kubernetes.NewForConfigOrDie(cp.Config), ns, name)
	dir := t.TempDir()
	src := policyScript(ns, `    return { allowed: false, message: "still serving" };`, `{ failurePolicy: "Fail", timeoutSeconds: 5 }`)
	if err := os.WriteFile(filepath.Join(dir, "policy.js"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	const delay = 1500 * time.Millisecond
	r := startAdmissionWith(t, cp.Config, dir, webhookFlags{addr: addr, name: name, url: "https://" + addr, shutdownDelay: delay}, nil)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, ok := r.engine.AdmissionScript("policy.js"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("policy.js did not serve admission within 20s")
		}
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(r.ca())
	body := configMapReview(t, ns)
	post := func() (status int, closes bool, answer string) {
		t.Helper()
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, DisableKeepAlives: true}}
		resp, err := client.Post("https://"+addr+"/validate/policy.js", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatalf("a review on a new connection: %v", err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Close, string(b)
	}
	if status, _, answer := post(); status != 200 || !strings.Contains(answer, "still serving") {
		t.Fatalf("before the stop: %d %s", status, answer)
	}
	stopped := make(chan struct{})
	start := time.Now()
	go func() { r.stop(); close(stopped) }() // joined below
	answered := 0
	for time.Since(start) < delay*2/3 {
		status, _, answer := post()
		if status != 200 || !strings.Contains(answer, "still serving") {
			t.Errorf("%s after the stop: %d %s, want the script's answer", time.Since(start), status, answer)
			break
		}
		answered++
	}
	<-stopped
	if took := time.Since(start); took < delay {
		t.Errorf("the runner stopped after %s, before its shutdown delay of %s", took, delay)
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Error("the webhook port still accepts after the stop")
	}
	t.Logf("%d reviews answered by the script in the first %s of the delay", answered, delay*2/3)
}

// configMapReview is an AdmissionReview of a ConfigMap's CREATE in ns.
func configMapReview(t *testing.T, ns string) []byte {
	t.Helper()
	obj, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": ns}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "u1", Operation: admissionv1.Create, Namespace: ns, Name: "c",
			Resource: metav1.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Object: runtime.RawExtension{Raw: obj}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
