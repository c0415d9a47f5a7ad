package admission

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/scripting"
)

// While 300 stalled and slow connections (some declaring 7 MiB or a terabyte of body) hold
// the webhook port, every review kube-apiserver sends is answered within the webhook's
// timeout: each create passes a Fail webhook and carries its warning. The heap bound is
// TestServerHoldsStalledAndSlowClientsWithinBounds's (this test runs beside others).
func TestAPIServerReviewsAnsweredDuringAnAttack(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	script := &realScript{s: instantiateFor(t, `export default { validate() { return { allowed: true, warnings: ["checked"] }; } };`)}
	srv := NewServer(Config{Lookup: func(name string) (Script, bool) { return script, name == "checked.js" },
		Limits: Limits{ReadHeaderTimeout: 2 * time.Second, ReadTimeout: 5 * time.Second}})
	url, ca := serveOnLoopback(t, srv)
	client := kubernetes.NewForConfigOrDie(cp.Config)
	ns := "adm-attack"
	newNamespace(t, client, ns)
	name := "jsinformer-test-" + ns
	reg := &Registrar{Client: client, Name: name, Target: Target{URL: url}, CABundle: func() []byte { return ca },
		Exclude: []string{"jsinformer-system"}, Entries: func() []Entry {
			spec := scripting.AdmissionSpec{Operations: []string{"CREATE"}, FailurePolicy: "Fail", TimeoutSeconds: 5, Mode: "enforce"}
			return []Entry{{Script: "checked.js", Validate: true, Spec: spec, Namespaces: []string{ns},
				Rules: []Rule{{Version: "v1", Resource: "configmaps", Namespaced: true}}}}
		}}
	reg.Init()
	if err := reg.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cleanupConfigs(t, client, name) })
	create := checkedCreate(t, cp, ns)
	for deadline := time.Now().Add(20 * time.Second); create() != nil; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the webhook did not take effect within 20s: %v", create())
		}
	}

	a := &attack{addr: strings.TrimPrefix(url, "https://"), clientTLS: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // hostile clients
	for range 100 {
		a.open(t, true, "")
		a.slow = append(a.slow, a.open(t, false, postHead("/validate/checked.js", DefaultMaxBodyBytes)))
	}
	for range 50 {
		a.open(t, false, postHead("/validate/checked.js", 1<<40)+"{")
		a.open(t, false, "POST /validate/checked.js HTTP/1.1\r\nHost: x\r\nContent-Le")
	}
	ctx, stop := context.WithCancel(t.Context())
	var trickling sync.WaitGroup
	trickling.Go(func() { a.trickle(ctx) })
	defer trickling.Wait()
	defer stop()
	var slowest time.Duration
	for range 20 {
		start := time.Now()
		if err := create(); err != nil {
			t.Errorf("a create during the attack: %v", err)
		}
		slowest = max(slowest, time.Since(start))
	}
	t.Logf("20 creates during %d hostile connections (live heap %d MiB, this process): slowest %s", len(a.conns), liveHeap()>>20, slowest)
	if slowest > 5*time.Second {
		t.Errorf("a create took %s during the attack, over the webhook's timeout of 5s", slowest)
	}
}

// checkedCreate returns a func creating a ConfigMap in ns that fails unless the webhook
// answered it (its warning "checked" reached the client).
func checkedCreate(t *testing.T, cp *controlplane.ControlPlane, ns string) func() error {
	t.Helper()
	seen := &warningsSeen{}
	cfg := rest.CopyConfig(cp.Config)
	cfg.WarningHandler = seen
	cms := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(ns)
	n := 0
	return func() error {
		n++
		seen.got = nil
		if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("cm-", n)}}, metav1.CreateOptions{}); err != nil {
			return err
		}
		if !strings.Contains(strings.Join(seen.got, "|"), "checked") {
			return fmt.Errorf("created without the webhook's warning (warnings %q)", seen.got)
		}
		return nil
	}
}
