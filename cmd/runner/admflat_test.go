package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// admissionClient posts AdmissionReviews to a runner's webhook server as the API server does,
// trusting its CA.
type admissionClient struct {
	url string
	hc  *http.Client
}

func newAdmissionClient(t *testing.T, addr string, ca []byte) *admissionClient {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatal("the runner's CA bundle holds no certificate")
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, MaxIdleConnsPerHost: 8, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &admissionClient{url: "https://" + addr, hc: &http.Client{Transport: tr, Timeout: 10 * time.Second}}
}

// validate asks the script's validate about a CREATE of ConfigMap ns/name and returns whether
// it was allowed.
func (c *admissionClient) validate(script, ns, name string, data map[string]string) (bool, error) {
	obj, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": ns}, "data": data})
	review := admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: types.UID(name), Operation: admissionv1.Create, Namespace: ns, Name: name,
			Kind:     metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
			Resource: metav1.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Object: kruntime.RawExtension{Raw: obj}}}
	body, _ := json.Marshal(review)
	resp, err := c.hc.Post(c.url+"/validate/"+script, "application/json", bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	defer func() { _ = resp.Body.Close() }() // closed here, read below
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return false, fmt.Errorf("read the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(b, &out); err != nil || out.Response == nil {
		return false, fmt.Errorf("not an AdmissionReview: %s", b)
	}
	return out.Response.Allowed, nil
}

// TestAdmissionFlatAcrossRequestsAndReloads: 10,000 admission requests and 50 reloads of the
// policy answering them leave the runner's goroutines where they were and its live heap
// within a bound far below what one leaked version per reload would hold.
func TestAdmissionFlatAcrossRequestsAndReloads(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a control plane and 10,000 requests")
	}
	// Not parallel: goroutines and the heap are the process's.
	cp := controlplane.Require(t, env)
	client := kubernetes.NewForConfigOrDie(cp.Config)
	ns, name := "adm-flat", "jsinformer-flat"
	t.Cleanup(func() { deleteWebhookConfigs(client, name) })
	dir := t.TempDir()
	write := func(k int) {
		src := policyScript(ns, `    if (obj.data && obj.data.bad) return { allowed: false, message: "bad" };`, `{ failurePolicy: "Fail", timeoutSeconds: 5 }`)
		if err := os.WriteFile(filepath.Join(dir, "policy.js"), []byte(fmt.Sprintf("%s// version %d\n", src, k)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(0)
	addr := freePort(t)
	r := startAdmissionRunner(t, cp.Config, dir, name, addr)
	hash := func() string {
		if es := r.engine.AdmissionEntries(); len(es) == 1 {
			return es[0].Hash
		}
		return ""
	}
	eventually(t, "policy.js serves admission", func() string {
		if hash() == "" {
			return "not yet"
		}
		return ""
	})
	reload := func(k int) {
		t.Helper()
		before := hash()
		write(k)
		eventually(t, fmt.Sprint("reload ", k), func() string {
			if h := hash(); h == "" || h == before {
				return "the new version does not serve yet"
			}
			return ""
		})
	}
	c := newAdmissionClient(t, addr, r.ca())
	requests := func(n int) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for w := range 4 {
			wg.Go(func() {
				for i := w; i < n; i += 4 {
					bad := i%2 == 1
					data := map[string]string{"n": fmt.Sprint(i)}
					if bad {
						data["bad"] = "1"
					}
					allowed, err := c.validate("policy.js", ns, fmt.Sprint("cm-", i%100), data)
					if err == nil && allowed == bad {
						err = fmt.Errorf("request %d (bad=%v): allowed=%v", i, bad, allowed)
					}
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	// Warm up: the runtimes, the connections and the trace fill what later requests reuse.
	requests(1000)
	reload(1)
	requests(1000)
	c.hc.CloseIdleConnections()
	goroutines, heap := runtime.NumGoroutine(), liveHeap()
	start := time.Now()
	const reloads, perReload = 50, 200 // 10,000 requests
	for k := 2; k < 2+reloads; k++ {
		reload(k)
		requests(perReload)
	}
	took := time.Since(start)
	c.hc.CloseIdleConnections()
	deadline := time.Now().Add(20 * time.Second)
	for runtime.NumGoroutine() > goroutines+5 {
		if time.Now().After(deadline) {
			t.Fatalf("goroutines: %d before, %d after %d requests and %d reloads", goroutines, runtime.NumGoroutine(), reloads*perReload, reloads)
		}
		time.Sleep(50 * time.Millisecond)
	}
	after := liveHeap()
	t.Logf("%d requests and %d reloads in %s; goroutines %d -> %d, live heap %.1f MB -> %.1f MB", reloads*perReload, reloads, took.Round(time.Millisecond),
		goroutines, runtime.NumGoroutine(), float64(heap)/(1<<20), float64(after)/(1<<20))
	// The trace ring fills with the decisions (bounded, a few MB); one leaked version per
	// reload, each with its admission runtimes, would be over 100 MB.
	const slack = 24 << 20
	if after > heap+slack {
		t.Fatalf("live heap grew from %.1f MB to %.1f MB over %d requests and %d reloads", float64(heap)/(1<<20), float64(after)/(1<<20), reloads*perReload, reloads)
	}
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
