package admission

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/scripting"
)

// namedScript is a realScript under its own name.
type namedScript struct {
	*realScript
	name string
}

func (n namedScript) Name() string { return n.name }

// TestAPIServerCallsOneEntryForScriptsAlike: three validating and two mutating scripts with
// the same spec on ConfigMaps are one entry of each kind; kube-apiserver's one call per entry
// reaches all of them: the second validate's denial, the others' warnings, and two mutates
// chained (the second sees the first's label).
func TestAPIServerCallsOneEntryForScriptsAlike(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	sources := map[string]string{
		"a-warn.js":      `export default { validate() { return { allowed: true, warnings: ["from a"] }; } };`,
		"team/b-deny.js": `export default { validate(obj) { if ((obj.metadata.labels || {}).deny) return { allowed: false, message: "b says no" }; } };`,
		"c-warn.js":      `export default { validate() { return { allowed: true, warnings: ["from c"] }; } };`,
		"m1.js": `export default { mutate(obj) {
  const out = util.clone(obj); out.metadata.labels = { ...out.metadata.labels, first: "1" }; return out; } };`,
		"m2.js": `export default { mutate(obj) {
  const out = util.clone(obj); out.metadata.labels = { ...out.metadata.labels, second: "saw-" + (obj.metadata.labels || {}).first }; return out; } };`,
	}
	scripts := map[string]Script{}
	for name, src := range sources {
		scripts[name] = namedScript{realScript: &realScript{s: instantiateFor(t, src)}, name: name}
	}
	var mu sync.Mutex
	var observed []string
	srv := NewServer(Config{Lookup: func(name string) (Script, bool) { s, ok := scripts[name]; return s, ok },
		Observe: func(o Observation) {
			mu.Lock()
			defer mu.Unlock()
			if o.Request.Name == "passes" {
				observed = append(observed, o.Script)
			}
		}})
	url, ca := serveOnLoopback(t, srv)
	client := kubernetes.NewForConfigOrDie(cp.Config)
	ns := "adm-fanout"
	newNamespace(t, client, ns)
	name := "jsinformer-test-" + ns
	reg := &Registrar{Client: client, Name: name, Target: Target{URL: url}, CABundle: func() []byte { return ca },
		Entries: func() []Entry {
			rule := []Rule{{Version: "v1", Resource: "configmaps", Namespaced: true}}
			spec := scripting.AdmissionSpec{Operations: []string{"CREATE", "UPDATE"}, FailurePolicy: "Fail", TimeoutSeconds: 5, Mode: "enforce"}
			var out []Entry
			for _, s := range []string{"a-warn.js", "c-warn.js", "m1.js", "m2.js", "team/b-deny.js"} {
				out = append(out, Entry{Script: s, Validate: !strings.HasPrefix(s, "m"), Mutate: strings.HasPrefix(s, "m"), Spec: spec, Rules: rule, Namespaces: []string{ns}})
			}
			return out
		}}
	reg.Init()
	if err := reg.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cleanupConfigs(t, client, name) })
	vwc, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil || len(vwc.Webhooks) != 1 || !strings.HasSuffix(*vwc.Webhooks[0].ClientConfig.URL, "/validate-group/fail/1/a-warn.js/1/c-warn.js/2/team/b-deny.js") {
		t.Fatalf("validating configuration: %v, %d entries, want one for the three scripts", err, len(vwc.Webhooks))
	}
	mwc, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil || len(mwc.Webhooks) != 1 || !strings.HasSuffix(*mwc.Webhooks[0].ClientConfig.URL, "/mutate-group/fail/1/m1.js/1/m2.js") {
		t.Fatalf("mutating configuration: %v, %d entries, want one for the two scripts", err, len(mwc.Webhooks))
	}

	if err := reg.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	again, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil || again.ResourceVersion != vwc.ResourceVersion {
		t.Errorf("an unchanged reconcile rewrote the shared entry (resourceVersion %s → %s, %v)", vwc.ResourceVersion, again.ResourceVersion, err)
	}

	seen := &warningsSeen{}
	cfg := rest.CopyConfig(cp.Config)
	cfg.WarningHandler = seen
	cms := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(ns)
	cm := func(n string, labels map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: labels}}
	}
	// The configurations take effect once the API server's informers see them: poll.
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err = cms.Create(t.Context(), cm("denied", map[string]string{"deny": "yes"}), metav1.CreateOptions{})
		if err != nil || time.Now().After(deadline) {
			break
		}
		_ = cms.Delete(t.Context(), "denied", metav1.DeleteOptions{})
		time.Sleep(100 * time.Millisecond)
	}
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "team/b-deny.js: b says no") {
		t.Fatalf("a ConfigMap the second script denies: %v, want its message", err)
	}
	seen.got = nil
	got, err := cms.Create(t.Context(), cm("passes", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen.got, []string{"from a", "from c"}) {
		t.Errorf("warnings seen by the client %q, want the two scripts' in order", seen.got)
	}
	if got.Labels["first"] != "1" || got.Labels["second"] != "saw-1" {
		t.Errorf("stored labels %v, want m1's and m2's, m2 having seen m1's", got.Labels)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"m1.js", "m2.js", "a-warn.js", "c-warn.js", "team/b-deny.js"}; !slices.Equal(observed, want) {
		t.Errorf("decisions observed %q, want each script's, mutations first", observed)
	}
}

// TestAPIServerAcceptsASharedServicePath: a Service's path must be made of DNS names, which a
// shared entry's is; kube-apiserver stores it.
func TestAPIServerAcceptsASharedServicePath(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	client := kubernetes.NewForConfigOrDie(cp.Config)
	// Its objectSelector matches nothing: the entries never touch the tests running beside.
	spec := scripting.AdmissionSpec{Operations: []string{"CREATE"}, FailurePolicy: "Ignore", TimeoutSeconds: 3}
	entry := func(script string) Entry {
		return Entry{Script: script, Validate: true, Mutate: true, Spec: spec, LabelSelector: "jsinformer-test=shared-service-path",
			Rules: []Rule{{Version: "v1", Resource: "configmaps", Namespaced: true}}}
	}
	reg := &Registrar{Client: client, Name: "jsinformer-test-shared-service", CABundle: func() []byte { return []byte("CA") },
		Target:  Target{ServiceNamespace: "jsinformer-system", Service: "runner"},
		Entries: func() []Entry { return []Entry{entry("team-a/policy.js"), entry("b.js"), entry("z.d/c.js")} }}
	reg.Init()
	t.Cleanup(func() { cleanupConfigs(t, client, reg.Name) })
	if err := reg.Reconcile(t.Context()); err != nil {
		t.Fatalf("kube-apiserver refused the shared entries: %v", err)
	}
	want := GroupPath("validate", "Ignore", []string{"b.js", "team-a/policy.js", "z.d/c.js"})
	vwc, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), reg.Name, metav1.GetOptions{})
	if err != nil || len(vwc.Webhooks) != 1 || *vwc.Webhooks[0].ClientConfig.Service.Path != want {
		t.Fatalf("validating configuration: %v, %+v; want one entry with path %s", err, vwc.Webhooks, want)
	}
}
