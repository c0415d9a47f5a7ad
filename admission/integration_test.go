package admission

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"net"
	"strings"
	"testing"
	"time"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/scripting"
)

var env *controlplane.ControlPlane

func TestMain(m *testing.M) { controlplane.Exit(m, &env) }

// warningsSeen collects the warnings the API server sends the client.
type warningsSeen struct{ got []string }

func (w *warningsSeen) HandleWarningHeader(_ int, _ string, text string) { w.got = append(w.got, text) }

// serveOnLoopback serves s over TLS on 127.0.0.1 until the test ends; it returns the URL and
// the CA bundle the API server needs.
func serveOnLoopback(t *testing.T, s *Server) (string, []byte) {
	t.Helper()
	cert, _ := selfSigned(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- s.Serve(ctx, ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, time.Second)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "https://" + ln.Addr().String(), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})
}

func newNamespace(t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	_, err := client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAPIServerCallsTheScripts registers one validating and one mutating script on a real
// kube-apiserver, which calls the server on loopback: denials, warnings and patches reach the
// client; kube-system is never sent to the scripts.
func TestAPIServerCallsTheScripts(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	scripts := map[string]Script{
		"require-team.js": &realScript{s: instantiateFor(t, `export default {
  validate(obj, ctx) {
    if (!(obj.metadata.labels || {}).team) return { allowed: false, message: "a team label is required (" + ctx.userInfo.username + ")" };
    if (obj.metadata.labels.team === "old") return { allowed: true, warnings: ["team old is deprecated"] };
  },
  admission: { operations: ["CREATE", "UPDATE"] },
};`)},
		"default-owner.js": &realScript{s: instantiateFor(t, `export default {
  mutate(obj) {
    if (obj.data && obj.data.owner) return;
    const out = util.clone(obj);
    out.data = { ...out.data, owner: "platform" };
    return out;
  },
};`)},
	}
	srv := NewServer(Config{Lookup: func(name string) (Script, bool) { s, ok := scripts[name]; return s, ok }})
	url, ca := serveOnLoopback(t, srv)
	client := kubernetes.NewForConfigOrDie(cp.Config)
	ns := "adm-" + strings.ToLower(t.Name()[len(t.Name())-8:])
	newNamespace(t, client, ns)
	name := "jsinformer-test-" + ns
	reg := &Registrar{Client: client, Name: name, Target: Target{URL: url}, CABundle: func() []byte { return ca },
		Exclude: []string{"jsinformer-system"}, Entries: func() []Entry {
			rule := []Rule{{Version: "v1", Resource: "configmaps", Namespaced: true}}
			spec := scripting.AdmissionSpec{Operations: []string{"CREATE", "UPDATE"}, FailurePolicy: "Fail", TimeoutSeconds: 5, Mode: "enforce"}
			return []Entry{
				{Script: "require-team.js", Validate: true, Spec: spec, Rules: rule, Namespaces: []string{ns}},
				{Script: "default-owner.js", Mutate: true, Spec: spec, Rules: rule, Namespaces: []string{ns}},
			}
		}}
	reg.Init()
	if err := reg.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cleanupConfigs(t, client, name) })

	seen := &warningsSeen{}
	cfg := rest.CopyConfig(cp.Config)
	cfg.WarningHandler = seen
	warned := kubernetes.NewForConfigOrDie(cfg)
	cms := warned.CoreV1().ConfigMaps(ns)
	cm := func(n string, labels map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: labels}, Data: map[string]string{"k": "v"}}
	}
	// The configurations take effect once the API server's informers see them: poll.
	var err error
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err = cms.Create(t.Context(), cm("unlabelled", nil), metav1.CreateOptions{})
		if err != nil || time.Now().After(deadline) {
			break
		}
		_ = cms.Delete(t.Context(), "unlabelled", metav1.DeleteOptions{})
		time.Sleep(100 * time.Millisecond)
	}
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "a team label is required (") {
		t.Fatalf("an unlabelled ConfigMap: %v, want denied with the script's message", err)
	}
	got, err := cms.Create(t.Context(), cm("old", map[string]string{"team": "old"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Data["owner"] != "platform" || got.Data["k"] != "v" {
		t.Errorf("stored data %v, want the mutation's owner added", got.Data)
	}
	if !strings.Contains(strings.Join(seen.got, "|"), "team old is deprecated") {
		t.Errorf("warnings seen by the client: %q", seen.got)
	}
	got.Labels = nil
	if _, err := cms.Update(t.Context(), got, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("an UPDATE removing the label: %v, want denied", err)
	}
}

func instantiateFor(t *testing.T, src string) *scripting.Script {
	t.Helper()
	p, err := scripting.Compile("policy.js", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Instantiate(scripting.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func cleanupConfigs(t *testing.T, client kubernetes.Interface, name string) {
	ctx := context.Background()
	_ = client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, name, metav1.DeleteOptions{})
	_ = client.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, name, metav1.DeleteOptions{})
}

// TestRegistrarReconcilesTheConfigurations checks what the configurations hold, that an
// unchanged reconcile writes nothing, that a change is written and that no entry deletes them.
func TestRegistrarReconcilesTheConfigurations(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	client := kubernetes.NewForConfigOrDie(cp.Config)
	entries := []Entry{{Script: "team-a/policy.js", Validate: true, Mutate: true,
		Spec:  scripting.AdmissionSpec{Operations: []string{"CREATE"}, FailurePolicy: "Ignore", TimeoutSeconds: 3},
		Rules: []Rule{{Group: "apps", Version: "v1", Resource: "deployments", Namespaced: true}}, LabelSelector: "app=web"},
		// Its objectSelector matches no namespace: with failurePolicy Fail and a CA that is no
		// certificate, the API server would refuse the namespaces the tests running beside
		// this one create (seen in make test-compat).
		{Script: "z.js", Validate: true, Mutate: true, Spec: scripting.AdmissionSpec{Operations: []string{"*"}, FailurePolicy: "Fail", TimeoutSeconds: 10},
			Rules: []Rule{{Version: "v1", Resource: "namespaces"}}, LabelSelector: "jsinformer-test=registrar-only"}}
	reg := &Registrar{Client: client, Name: "jsinformer-test-registrar", CABundle: func() []byte { return []byte("CA") },
		Target: Target{ServiceNamespace: "jsinformer-system", Service: "runner"}, Exclude: []string{"jsinformer-system"},
		Entries: func() []Entry { return entries }}
	reg.Init()
	t.Cleanup(func() { cleanupConfigs(t, client, reg.Name) })
	mustReconcile := func() {
		t.Helper()
		if err := reg.Reconcile(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	mustReconcile()
	vwc, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), reg.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(vwc.Webhooks) != 2 {
		t.Fatalf("webhooks = %+v", vwc.Webhooks)
	}
	w := vwc.Webhooks[0]
	svc := w.ClientConfig.Service
	if w.Name != WebhookName("team-a/policy.js", "validate") || *w.MatchPolicy != admissionregv1.Equivalent ||
		*w.SideEffects != admissionregv1.SideEffectClassNone || *w.FailurePolicy != admissionregv1.Ignore || *w.TimeoutSeconds != 3 ||
		strings.Join(w.AdmissionReviewVersions, ",") != "v1" || string(w.ClientConfig.CABundle) != "CA" ||
		svc == nil || svc.Namespace != "jsinformer-system" || svc.Name != "runner" || *svc.Path != "/validate/team-a/policy.js" || *svc.Port != 443 ||
		w.ObjectSelector.MatchLabels["app"] != "web" {
		t.Errorf("webhook = %+v\nclient %+v", w, w.ClientConfig)
	}
	if got := w.NamespaceSelector.MatchExpressions; len(got) != 1 || got[0].Operator != metav1.LabelSelectorOpNotIn ||
		strings.Join(got[0].Values, ",") != "jsinformer-system,kube-node-lease,kube-system" { // a set, sorted
		t.Errorf("namespaceSelector = %+v, want kube-system, kube-node-lease and the runner's namespace excluded", got)
	}
	if r := w.Rules; len(r) != 1 || r[0].APIGroups[0] != "apps" || r[0].Resources[0] != "deployments" || string(r[0].Operations[0]) != "CREATE" ||
		*r[0].Scope != admissionregv1.NamespacedScope {
		t.Errorf("rules = %+v", r)
	}
	mwc, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(t.Context(), reg.Name, metav1.GetOptions{})
	if err != nil || len(mwc.Webhooks) != 2 || *mwc.Webhooks[0].ClientConfig.Service.Path != "/mutate/team-a/policy.js" {
		t.Fatalf("mutating configuration: %v, %+v", err, mwc)
	}

	mustReconcile()
	again, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), reg.Name, metav1.GetOptions{})
	if err != nil || again.ResourceVersion != vwc.ResourceVersion {
		t.Errorf("an unchanged reconcile wrote the configuration (resourceVersion %s → %s, %v)", vwc.ResourceVersion, again.ResourceVersion, err)
	}
	mAgain, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(t.Context(), reg.Name, metav1.GetOptions{})
	if err != nil || mAgain.ResourceVersion != mwc.ResourceVersion {
		t.Errorf("an unchanged reconcile wrote the mutating configuration (resourceVersion %s → %s, %v)", mwc.ResourceVersion, mAgain.ResourceVersion, err)
	}
	entries[0].Spec.TimeoutSeconds = 7
	mustReconcile()
	changed, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), reg.Name, metav1.GetOptions{})
	if err != nil || *changed.Webhooks[0].TimeoutSeconds != 7 {
		t.Errorf("after a change: %v, %+v", err, changed)
	}
	entries = nil
	mustReconcile()
	if _, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), reg.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("with no entry the configuration is still there: %v", err)
	}
}
