package admission

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/scripting"
)

// TestRegistrarsMergeTheCABundle: two registrars (two replicas) write one configuration
// pair through kube-apiserver. The one that sees a new CA adds it beside the old one, the
// other, still on the old CA, rewrites nothing; both configurations report the bundle to
// Registered; once both want the new CA only, Run drops the old one when the grace is over
// (a timer, not the minute's resync), written once.
func TestRegistrarsMergeTheCABundle(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	client := kubernetes.NewForConfigOrDie(cp.Config)
	oldCA, newCA := testCA(t, "old", 24*time.Hour), testCA(t, "new", 24*time.Hour)
	entries := []Entry{{Script: "policy.js", Validate: true, Mutate: true,
		Spec:  scripting.AdmissionSpec{Operations: []string{"CREATE"}, FailurePolicy: "Ignore", TimeoutSeconds: 3},
		Rules: []Rule{{Version: "v1", Resource: "configmaps", Namespaced: true}}, Namespaces: []string{"cabundle-none"}}}
	type replica struct {
		*Registrar
		wanted     atomic.Pointer[[]byte]
		registered atomic.Pointer[[]byte]
	}
	newReplica := func() *replica {
		r := &replica{}
		r.Registrar = &Registrar{Client: client, Name: "jsinformer-test-cabundle", Target: Target{URL: "https://127.0.0.2:9443"},
			CABundle: func() []byte { return *r.wanted.Load() }, Registered: func(b []byte) { r.registered.Store(&b) },
			CAGrace: 3 * time.Second, Entries: func() []Entry { return entries }}
		r.Init()
		return r
	}
	a, b := newReplica(), newReplica()
	t.Cleanup(func() { cleanupConfigs(t, client, a.Name) })
	want := func(r *replica, cas ...[]byte) { joined := bytes.Join(cas, nil); r.wanted.Store(&joined) }
	stored := func() (validating, mutating []byte, rv string) {
		t.Helper()
		vwc, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), a.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mwc, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(t.Context(), a.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return vwc.Webhooks[0].ClientConfig.CABundle, mwc.Webhooks[0].ClientConfig.CABundle, vwc.ResourceVersion + "/" + mwc.ResourceVersion
	}
	reconcile := func(r *replica) {
		t.Helper()
		if err := r.Reconcile(t.Context()); err != nil {
			t.Fatal(err)
		}
	}

	want(a, oldCA)
	want(b, oldCA)
	reconcile(a)
	want(a, oldCA, newCA) // a holds the new CA
	reconcile(a)
	v, m, rv := stored()
	if !bundleHas(v, oldCA) || !bundleHas(v, newCA) || !bytes.Equal(v, m) {
		t.Fatal("the configurations do not carry both CAs")
	}
	if got := a.registered.Load(); got == nil || !bundleHas(*got, newCA) {
		t.Error("Registered was not told the bundle with the new CA")
	}
	reconcile(b) // still on the old CA
	if _, _, rv2 := stored(); rv2 != rv {
		t.Error("a replica on the old CA rewrote the configurations")
	}

	want(a, newCA)
	want(b, newCA)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { _ = a.Run(ctx) }) // Resync is a minute: only the drop timer reconciles in time
	defer func() { cancel(); wg.Wait() }()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if v, m, _ := stored(); !bundleHas(v, oldCA) && !bundleHas(m, oldCA) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the old CA is still in the configurations 15 s after a grace of 3 s")
		}
	}
	_, _, rv = stored()
	reconcile(b)
	if v, _, rv2 := stored(); rv2 != rv || !bundleHas(v, newCA) {
		t.Error("after the drop, the other replica rewrote the configurations")
	}
}
