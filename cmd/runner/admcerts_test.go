package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/admission"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// certTimings shortens what the test waits for: the Secret read every check, a new CA
// served 300 ms after its registration, the old CA kept 5 s after the new one came.
func certTimings(check time.Duration) func(*webhooks) {
	return func(h *webhooks) {
		h.registrar.Resync = 200 * time.Millisecond
		h.registrar.CAGrace = 5 * time.Second
		s := h.certs.(*admission.SecretCerts)
		s.Check, s.Settle = check, 300*time.Millisecond
	}
}

// servesCA reports whether the server at addr presents a certificate that ca verifies.
func servesCA(addr string, ca []byte) bool {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: time.Second},
		Config: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// bundleLog records the distinct caBundles the validating configuration carried, in order.
type bundleLog struct {
	mu  sync.Mutex
	got [][]byte
	at  []time.Time // when each was seen
}

func (b *bundleLog) add(bundle []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n := len(b.got); n == 0 || !bytes.Equal(b.got[n-1], bundle) {
		b.got, b.at = append(b.got, bytes.Clone(bundle)), append(b.at, time.Now())
	}
}

// lasted is how long the i-th bundle was registered, until the next one.
func (b *bundleLog) lasted(i int) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.at[i+1].Sub(b.at[i])
}

func (b *bundleLog) latest() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.got[len(b.got)-1]
}

func (b *bundleLog) names(names map[string][]byte) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]string, len(b.got))
	for i, got := range b.got {
		out[i] = "?"
		for name, want := range names {
			if bytes.Equal(got, want) {
				out[i] = name
			}
		}
	}
	return out
}

// watchBundles records the caBundle of the configuration name from resourceVersion rv on,
// until ctx ends; the returned function waits for the watch to stop.
func watchBundles(ctx context.Context, t *testing.T, client kubernetes.Interface, name, rv string, log *bundleLog) func() {
	t.Helper()
	w, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Watch(ctx,
		metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: rv})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer w.Stop()
		for ev := range w.ResultChan() {
			if vwc, ok := ev.Object.(*admissionregv1.ValidatingWebhookConfiguration); ok {
				log.add(validatingBundle(vwc))
			}
		}
	}()
	return func() { w.Stop(); <-done }
}

// TestReplicasMoveToANewCAWithoutAFailedReview: two replicas serve a Fail policy behind one
// address while a writer creates objects through kube-apiserver. The shared Secret is
// deleted: a replica makes a new CA, the entries' caBundle carries the old and the new CA
// (written once), both replicas serve the new CA within the bound, the old CA leaves after
// the grace, no review fails meanwhile, and at every moment each replica presents a
// certificate the registered caBundle trusts.
func TestReplicasMoveToANewCAWithoutAFailedReview(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	client := kubernetes.NewForConfigOrDie(cp.Config)
	ns, name := "adm-certs", "jsinformer-certs"
	admissionNamespace(t, client, ns, name)
	dir := t.TempDir()
	src := policyScript(ns, `    if (obj.data && obj.data.bad) return { allowed: false, message: "bad data" };`, `{ failurePolicy: "Fail", timeoutSeconds: 5 }`)
	if err := os.WriteFile(filepath.Join(dir, "policy.js"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	addrs := []string{freePort(t), freePort(t)}
	front := startFailover(t, addrs...)
	// The second replica reads the Secret less often: it still serves the old CA for up to
	// 2 s after the first one has moved.
	startTunedReplica(t, cp.Config, dir, name, addrs[0], "https://"+front.addr(), certTimings(200*time.Millisecond))
	startTunedReplica(t, cp.Config, dir, name, addrs[1], "https://"+front.addr(), certTimings(2*time.Second))
	cms := client.CoreV1().ConfigMaps(ns)
	create := func(ctx context.Context, bad bool) error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "cm-"}}
		if bad {
			cm.Data = map[string]string{"bad": "1"}
		}
		_, err := cms.Create(ctx, cm, metav1.CreateOptions{})
		return err
	}
	eventually(t, "the policy denies through the API server", func() string {
		if err := create(t.Context(), true); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "bad data") {
			return fmt.Sprint("create of a bad ConfigMap: ", err)
		}
		return ""
	})
	secrets := client.CoreV1().Secrets("default")
	sec, err := secrets.Get(t.Context(), name+"-tls", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oldCA := sec.Data["ca.crt"]
	vwc, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bundles := &bundleLog{}
	bundles.add(validatingBundle(vwc))
	stopWatch := watchBundles(t.Context(), t, client, name, vwc.ResourceVersion, bundles)
	defer stopWatch()

	writes := startWriter(t, create)
	untrusted := probeTrust(t, addrs, bundles)
	deleted := time.Now()
	if err := secrets.Delete(t.Context(), name+"-tls", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var newCA []byte
	eventually(t, "a replica makes a new CA", func() string {
		sec, err := secrets.Get(t.Context(), name+"-tls", metav1.GetOptions{})
		if err != nil || bytes.Equal(sec.Data["ca.crt"], oldCA) {
			return fmt.Sprint("not yet: ", err)
		}
		newCA = sec.Data["ca.crt"]
		return ""
	})
	converged := map[string]time.Duration{}
	for deadline := deleted.Add(time.Minute); len(converged) < len(addrs); time.Sleep(20 * time.Millisecond) {
		for _, addr := range addrs {
			if _, ok := converged[addr]; !ok && servesCA(addr, newCA) {
				converged[addr] = time.Since(deleted)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("replicas serving the new CA a minute after the Secret's deletion: %v", converged)
		}
	}
	// Both CAs: old then new, or in fingerprint order when added within the same second.
	names := map[string][]byte{"old": oldCA, "both": append(bytes.Clone(oldCA), newCA...), "new": newCA}
	if got := bundles.names(names); len(got) > 1 && got[1] == "?" {
		names["both"] = append(bytes.Clone(newCA), oldCA...)
	}
	eventually(t, "the old CA leaves the caBundle after the grace", func() string {
		if got := bundles.names(names); got[len(got)-1] != "new" {
			return fmt.Sprint("bundles so far: ", got)
		}
		return ""
	})
	for i := range 10 { // the policy still decides, through either replica
		if err := create(t.Context(), true); !apierrors.IsForbidden(err) {
			t.Errorf("bad ConfigMap %d after the change: %v, want denied", i, err)
		}
	}
	n, failed := writes()
	for _, msg := range untrusted() {
		t.Error(msg)
	}
	if got := bundles.names(names); strings.Join(got, " ") != "old both new" {
		t.Errorf("caBundles in order: %v, want old, both, new (each written once)", got)
	} else if both := bundles.lasted(1); both < 4*time.Second { // the grace, less the second its times are rounded to
		t.Errorf("the old CA stayed %v beside the new one, want the grace of 5 s", both)
	}
	for _, err := range failed {
		t.Errorf("a review failed during the CA change: %v", err)
	}
	t.Logf("%d creates during the change, none failed; replicas serving the new CA %v after the deletion; connections per replica %d, %d",
		n, converged, front.conns[0].Load(), front.conns[1].Load())
}

// startWriter creates objects with create until the returned function is called, which
// returns how many it created and the errors.
func startWriter(t *testing.T, create func(context.Context, bool) error) func() (int64, []error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var n atomic.Int64
	var failed []error
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if err := create(ctx, false); err != nil && ctx.Err() == nil {
				failed = append(failed, err)
			}
			n.Add(1)
		}
	}()
	stop := func() (int64, []error) {
		cancel()
		<-done
		return n.Load(), failed
	}
	t.Cleanup(func() { stop() })
	return stop
}

// probeTrust checks, until the returned function is called, that each replica presents a
// certificate the caBundle registered last trusts (a replica may serve a new CA only after
// the bundle carrying it is registered); that function returns the failures.
func probeTrust(t *testing.T, addrs []string, bundles *bundleLog) func() []string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var failed []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond) // a handshake per replica every 10 ms
		defer tick.Stop()
		for ctx.Err() == nil {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			bundle := bundles.latest()
			for i, addr := range addrs {
				if !servesCA(addr, bundle) && len(failed) < 10 {
					failed = append(failed, fmt.Sprintf("replica %d presents a certificate the registered caBundle does not trust", i))
				}
			}
		}
	}()
	stop := func() []string {
		cancel()
		<-done
		return failed
	}
	t.Cleanup(func() { stop() })
	return stop
}

// validatingBundle is the caBundle of a ValidatingWebhookConfiguration's first entry.
func validatingBundle(vwc *admissionregv1.ValidatingWebhookConfiguration) []byte {
	if len(vwc.Webhooks) == 0 {
		return nil
	}
	return vwc.Webhooks[0].ClientConfig.CABundle
}

// TestWebhookCertDirWithoutCARefusesToStart: registering the webhooks with a certificate
// folder that has no ca.crt fails the start, naming the file, instead of pinning tls.crt in
// the caBundle (the check comes before the pair is parsed: the files here are placeholders).
func TestWebhookCertDirWithoutCARefusesToStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, f := range []string{"tls.crt", "tls.key"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("placeholder"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	flags := webhookFlags{addr: "127.0.0.1:0", url: "https://127.0.0.1:9443", certDir: dir, name: "jsinformer-cadir"}
	_, parts, err := flags.newWebhooks(t.Context(), &rest.Config{Host: "https://127.0.0.2:1"}, false, slog.New(slog.DiscardHandler))
	if parts != nil {
		_ = parts.ln.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "--webhook-cert-dir") || !strings.Contains(err.Error(), "has no ca.crt") {
		t.Errorf("start with --webhook-url and no ca.crt: %v, want refused naming ca.crt", err)
	}
}
