package admission

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"net"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/scripting"
)

// serveCert serves cert over TLS on a loopback port until the returned func is called (or
// the test ends); it returns the URL.
func serveCert(t *testing.T, cert tls.Certificate) (string, func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(Config{Lookup: func(string) (Script, bool) { return nil, false }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- s.Serve(ctx, ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, time.Second)
	}()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}
	t.Cleanup(stop)
	return "https://" + ln.Addr().String(), stop
}

// TestReplicasWithTheirOwnURLsConverge: two registrars with different URLs (two replicas,
// each with its --webhook-url) do not take the entries from each other: the second keeps the
// first's URL while a server answers there, and takes over once none does.
func TestReplicasWithTheirOwnURLsConverge(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	client := kubernetes.NewForConfigOrDie(cp.Config)
	cert, _ := selfSigned(t) // one CA, as replicas sharing the certificate Secret have
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})
	urlA, stopA := serveCert(t, cert)
	urlB, _ := serveCert(t, cert)
	entries := []Entry{{Script: "policy.js", Validate: true, Mutate: true, Spec: scripting.AdmissionSpec{Operations: []string{"CREATE"}, FailurePolicy: "Ignore", TimeoutSeconds: 3},
		Rules: []Rule{{Version: "v1", Resource: "configmaps", Namespaced: true}}, Namespaces: []string{"share-none"}}}
	replica := func(url string) *Registrar {
		r := &Registrar{Client: client, Name: "jsinformer-test-share", Target: Target{URL: url}, CABundle: func() []byte { return ca },
			Entries: func() []Entry { return entries }}
		r.Init()
		return r
	}
	a, b := replica(urlA), replica(urlB)
	t.Cleanup(func() { cleanupConfigs(t, client, a.Name) })
	registered := func(r *Registrar) (validating, mutating, rv string) {
		t.Helper()
		if err := r.Reconcile(t.Context()); err != nil {
			t.Fatal(err)
		}
		vwc, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), a.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mwc, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(t.Context(), a.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return *vwc.Webhooks[0].ClientConfig.URL, *mwc.Webhooks[0].ClientConfig.URL, vwc.ResourceVersion + "/" + mwc.ResourceVersion
	}
	v, m, rv := registered(a)
	if v != urlA+"/validate/policy.js" || m != urlA+"/mutate/policy.js" {
		t.Fatalf("the first replica registered %s and %s", v, m)
	}
	for i, r := range []*Registrar{b, a, b} {
		if v2, m2, rv2 := registered(r); v2 != v || m2 != m || rv2 != rv {
			t.Fatalf("reconcile %d rewrote the entries: %s %s (resourceVersions %s → %s), want %s kept", i+1, v2, m2, rv, rv2, v)
		}
	}
	if !b.keptForeign {
		t.Error("the second replica does not know it keeps another's URL (it would not check it within AnswerCheck)")
	}

	stopA()
	if v, m, _ := registered(b); v != urlB+"/validate/policy.js" || m != urlB+"/mutate/policy.js" {
		t.Fatalf("with the first replica's server gone, the second registered %s and %s, want its own", v, m)
	}
	if v, _, _ := registered(a); v != urlB+"/validate/policy.js" {
		t.Errorf("the first replica, its server gone, took the entries back: %s", v)
	}
}
