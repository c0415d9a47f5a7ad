package memcluster_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"maps"
	"math/big"
	"net"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/jsinformer/jsinformer/admission"
	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/internal/memcluster"
	"github.com/jsinformer/jsinformer/offline"
	"github.com/jsinformer/jsinformer/scripting"
)

// The admission cross-check: one script's validate and mutate (then two scripts sharing their
// entries), served by the offline
// harness's webhook handler to the real kube-apiserver and run by the in-memory cluster
// through the harness's hook, must give every write the same answer: the denial's code,
// reason and message, the failure policy's error, and the object a mutation stored.

const xcheckPolicy = `export default {
  watch: { resource: "v1/configmaps", namespace: %q },
  validate(obj) {
    if (obj.metadata.name === "boom") throw new Error("boom");
    if (!(obj.metadata.labels || {}).team) return { allowed: false, message: "a team label is required" };
    if (obj.metadata.labels.team === "teapot") return { allowed: false, message: "no teapots", code: 418 };
  },
  mutate(obj) {
    if (obj.data && obj.data.owner) return;
    const out = util.clone(obj);
    out.data = { ...out.data, owner: "platform" };
    out.metadata.labels = { ...out.metadata.labels, mutated: "yes" };
    return out;
  },
};`

func TestAdmissionCrossCheckWithControlPlane(t *testing.T) {
	t.Parallel()
	sides := admissionSides(t, map[string]string{"policy.js": xcheckPolicy})
	labelled := func(s *side, name, team string) *unstructured.Unstructured {
		u := cm(s, name, map[string]any{"k": "v"})
		u.SetLabels(map[string]string{"team": team})
		return u
	}
	steps := []step{
		{"an unlabelled create is denied", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return s.ri(cmGVR).Create(ctx, cm(s, "plain", map[string]any{"k": "v"}), metav1.CreateOptions{FieldManager: "xcheck"})
		}},
		{"a denial with its own code", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return s.ri(cmGVR).Create(ctx, labelled(s, "tea", "teapot"), metav1.CreateOptions{FieldManager: "xcheck"})
		}},
		{"a throwing validate denies by failurePolicy Fail", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return s.ri(cmGVR).Create(ctx, labelled(s, "boom", "a"), metav1.CreateOptions{FieldManager: "xcheck"})
		}},
		{"a labelled create stores the mutation", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return s.ri(cmGVR).Create(ctx, labelled(s, "good", "a"), metav1.CreateOptions{FieldManager: "xcheck"})
		}},
		{"a dry-run create is mutated too", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return s.ri(cmGVR).Create(ctx, labelled(s, "dry", "a"), metav1.CreateOptions{FieldManager: "xcheck", DryRun: []string{metav1.DryRunAll}})
		}},
		{"an update dropping the label is denied", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			u := cm(s, "good", map[string]any{"k": "w"})
			return s.ri(cmGVR).Update(ctx, u, metav1.UpdateOptions{FieldManager: "xcheck"})
		}},
		{"a merge patch is mutated and validated", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return s.ri(cmGVR).Patch(ctx, "good", "application/merge-patch+json", []byte(`{"data":{"owner":null,"k":"x"}}`), metav1.PatchOptions{FieldManager: "xcheck"})
		}},
		{"an apply is mutated and validated", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"applied","namespace":%q},"data":{"k":"v"}}`, s.ns)
			return s.ri(cmGVR).Patch(ctx, "applied", "application/apply-patch+yaml", []byte(body), metav1.PatchOptions{FieldManager: "xcheck"})
		}},
		{"a delete is not among the operations", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return nil, s.ri(cmGVR).Delete(ctx, "good", metav1.DeleteOptions{})
		}},
	}
	compareSteps(t, sides, steps)
}

// compareSteps runs each step on both sides and compares their outcomes.
func compareSteps(t *testing.T, sides []*side, steps []step) {
	t.Helper()
	for _, st := range steps {
		got := [2]string{}
		for i, s := range sides {
			o, err := st.run(t.Context(), s)
			got[i] = outcome(s, o, err)
		}
		if got[0] != got[1] {
			t.Errorf("%s:\n  control plane: %s\n  in memory:     %s", st.name, got[0], got[1])
		}
	}
}

// admissionSides loads scripts (sources with a %q for the namespace) in an offline harness
// whose webhook handler the control plane calls, each script with the same entries (so that
// they share them, as the runner registers them), and returns the two sides once the
// control plane's webhooks are in effect: the control plane's first, the in-memory cluster's.
func admissionSides(t *testing.T, scripts map[string]string) []*side {
	t.Helper()
	cp := controlplane.Require(t, env)
	suffix := utilrand.String(6)
	ns := "admx-" + suffix
	mem, err := memcluster.New(memcluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := offline.New(offline.Config{Cluster: mem, Clock: clocktesting.NewFakeClock(time.Now())})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	for _, name := range slices.Sorted(maps.Keys(scripts)) {
		if err := h.Load(t.Context(), name, fmt.Appendf(nil, scripts[name], ns)); err != nil {
			t.Fatal(err)
		}
	}
	real, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	sides := []*side{{dyn: real, ns: ns, group: "unused.invalid"}, {dyn: mem.Client(nil), ns: ns, group: "unused.invalid"}}
	for _, s := range sides {
		if _, err := s.dyn.Resource(nsGVR).Create(t.Context(), obj("v1", "Namespace", "", ns, nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = real.Resource(nsGVR).Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	registerPolicy(t, cp, h.AdmissionServer(), ns, "jsinformer-xcheck-"+suffix, slices.Sorted(maps.Keys(scripts)))
	waitDenied(t, sides[0])
	return sides
}

// registerPolicy serves srv on loopback over TLS and registers the scripts' webhooks (each a
// validate and a mutate, with the default admission options) with the control plane, for
// namespace ns, until the test ends.
func registerPolicy(t *testing.T, cp *controlplane.ControlPlane, srv *admission.Server, ns, name string, scripts []string) {
	t.Helper()
	cert, caPEM := loopbackCert(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- srv.Serve(ctx, ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, time.Second)
	}()
	client := kubernetes.NewForConfigOrDie(cp.Config)
	spec := scripting.AdmissionSpec{Operations: scripting.DefaultOperations, FailurePolicy: scripting.FailurePolicyFail,
		TimeoutSeconds: scripting.DefaultAdmissionTimeoutSeconds, Mode: scripting.ModeEnforce}
	reg := &admission.Registrar{Client: client, Name: name, Target: admission.Target{URL: "https://" + ln.Addr().String()},
		CABundle: func() []byte { return caPEM }, Entries: func() []admission.Entry {
			var out []admission.Entry
			for _, script := range scripts {
				out = append(out, admission.Entry{Script: script, Validate: true, Mutate: true, Spec: spec,
					Rules: []admission.Rule{{Version: "v1", Resource: "configmaps", Namespaced: true}}, Namespaces: []string{ns}})
			}
			return out
		}}
	reg.Init()
	t.Cleanup(func() {
		bg := context.Background()
		_ = client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(bg, name, metav1.DeleteOptions{})
		_ = client.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(bg, name, metav1.DeleteOptions{})
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve admission: %v", err)
		}
	})
	if err := reg.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// waitDenied polls until the control plane's webhooks are in effect: an unlabelled
// ConfigMap is refused.
func waitDenied(t *testing.T, s *side) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := s.ri(cmGVR).Create(t.Context(), cm(s, "probe", nil), metav1.CreateOptions{})
		if apierrors.IsForbidden(err) {
			return
		}
		if err == nil {
			_ = s.ri(cmGVR).Delete(t.Context(), "probe", metav1.DeleteOptions{})
		}
		if time.Now().After(deadline) {
			t.Fatalf("the webhooks are not in effect after 30s: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// loopbackCert is a self-signed serving certificate for 127.0.0.1 and its PEM, the CA bundle.
func loopbackCert(t *testing.T) (tls.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "xcheck"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// xcheckSecond shares policy.js's entries: its mutate sees policy.js's label, its validate
// denies another team.
const xcheckSecond = `export default {
  watch: { resource: "v1/configmaps", namespace: %q },
  validate(obj) {
    if ((obj.metadata.labels || {}).team === "bee") return { allowed: false, message: "no bees", code: 422 };
  },
  mutate(obj) {
    const out = util.clone(obj);
    out.metadata.labels = { ...out.metadata.labels, second: "saw-" + ((obj.metadata.labels || {}).mutated || "nothing") };
    return out;
  },
};`

// TestAdmissionCrossCheckSharedEntries: two scripts sharing one entry of each kind give the
// same answers both ways: the chained mutations stored, each script's denial named.
func TestAdmissionCrossCheckSharedEntries(t *testing.T) {
	t.Parallel()
	sides := admissionSides(t, map[string]string{"policy.js": xcheckPolicy, "second.js": xcheckSecond})
	labelled := func(s *side, name, team string) *unstructured.Unstructured {
		u := cm(s, name, map[string]any{"k": "v"})
		u.SetLabels(map[string]string{"team": team})
		return u
	}
	create := func(name, team string) func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
		return func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			u := cm(s, name, map[string]any{"k": "v"})
			if team != "" {
				u = labelled(s, name, team)
			}
			return s.ri(cmGVR).Create(ctx, u, metav1.CreateOptions{FieldManager: "xcheck"})
		}
	}
	compareSteps(t, sides, []step{
		{"policy.js denies an unlabelled create", create("plain", "")},
		{"second.js denies a bee with its code", create("bee", "bee")},
		{"policy.js's teapot and its code", create("tea", "teapot")},
		{"a labelled create stores both mutations, chained", create("good", "a")},
		{"a merge patch is mutated and validated by both", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return s.ri(cmGVR).Patch(ctx, "good", "application/merge-patch+json", []byte(`{"metadata":{"labels":{"second":null}},"data":{"owner":null}}`), metav1.PatchOptions{FieldManager: "xcheck"})
		}},
	})
	stored, err := sides[0].ri(cmGVR).Get(t.Context(), "good", metav1.GetOptions{})
	if err != nil || stored.GetLabels()["second"] != "saw-yes" {
		t.Errorf("on the control plane: %v, labels %v; want second.js to have seen policy.js's label", err, stored.GetLabels())
	}
}
