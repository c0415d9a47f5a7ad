package admission

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"

	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/scripting"
)

// Registration against kube-apiserver: names it refuses in a Service's path, the namespaces no
// entry ever matches, and subresources.

// neverMatched is a label selector no object of the other tests has: the entries of these
// tests, under Fail with a Service that does not resolve, never touch their writes.
const neverMatched = "jsinformer-test=register-only"

// TestServiceEntriesOfAnyScriptNameRegister: with a Service target, scripts named "Policy.js"
// and "a_b.js" (not DNS-1123 path segments) get paths the API server accepts, so the other
// entries update with them: the stale Fail entry of ok.js becomes Ignore. An entry no path can
// be made for ("x//b.js", a name no file has) is left out alone and logged.
func TestServiceEntriesOfAnyScriptNameRegister(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	client := kubernetes.NewForConfigOrDie(cp.Config)
	entry := func(script, policy string, timeout int) Entry {
		return Entry{Script: script, Validate: true, Mutate: true, LabelSelector: neverMatched,
			Spec:  scripting.AdmissionSpec{Operations: []string{"CREATE"}, FailurePolicy: policy, TimeoutSeconds: timeout},
			Rules: []Rule{{Version: "v1", Resource: "configmaps", Namespaced: true}}}
	}
	entries := []Entry{entry("ok.js", "Fail", 5)}
	var logs bytes.Buffer
	reg := &Registrar{Client: client, Name: "jsinformer-test-names", CABundle: func() []byte { return []byte("CA") },
		Target: Target{ServiceNamespace: "jsinformer-system", Service: "runner"}, Entries: func() []Entry { return entries },
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	reg.Init()
	t.Cleanup(func() { cleanupConfigs(t, client, reg.Name) })
	if err := reg.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	entries = []Entry{entry("ok.js", "Ignore", 5), entry("Policy.js", "Fail", 6), entry("team_a/a_b.js", "Fail", 7), entry("x//b.js", "Fail", 8)}
	if err := reg.Reconcile(t.Context()); err != nil {
		t.Fatalf("reconcile with names that are not DNS segments: %v", err)
	}
	vwc, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), reg.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byScript := map[string]admissionregv1.ValidatingWebhook{}
	for _, w := range vwc.Webhooks {
		path := *w.ClientConfig.Service.Path
		name, ok := DecodeName(strings.TrimPrefix(path, ValidatePrefix))
		if !ok {
			t.Errorf("entry %s: path %q does not decode", w.Name, path)
		}
		byScript[name] = w
	}
	if w, ok := byScript["ok.js"]; !ok || *w.FailurePolicy != admissionregv1.Ignore {
		t.Errorf("ok.js's entry was not updated: %+v", w)
	}
	if _, ok := byScript["Policy.js"]; !ok || len(byScript) != 3 || byScript["team_a/a_b.js"].Name == "" {
		t.Errorf("registered %d entries: %v; want ok.js, Policy.js and team_a/a_b.js", len(vwc.Webhooks), keys(byScript))
	}
	if !strings.Contains(logs.String(), "webhook entry not registered") || !strings.Contains(logs.String(), "x//b.js") {
		t.Errorf("the entry left out is not logged:\n%s", logs.String())
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestNodeLeasesAreNeverSentToAWebhook: a Fail entry on Leases whose server never answers
// denies a Lease in another namespace, never one in kube-node-lease (the nodes' heartbeats)
// nor kube-system; the registered namespaceSelector says so.
func TestNodeLeasesAreNeverSentToAWebhook(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	client := kubernetes.NewForConfigOrDie(cp.Config)
	ns := "adm-leases"
	newNamespace(t, client, ns)
	const selector = "jsinformer-test=node-lease"
	reg := &Registrar{Client: client, Name: "jsinformer-test-leases", CABundle: func() []byte { return []byte("CA") },
		Target: Target{URL: "https://127.0.0.2:1"}, Entries: func() []Entry {
			return []Entry{{Script: "leases.js", Validate: true, LabelSelector: selector,
				Spec:  scripting.AdmissionSpec{Operations: []string{"CREATE"}, FailurePolicy: "Fail", TimeoutSeconds: 2},
				Rules: []Rule{{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Namespaced: true}}}}
		}}
	reg.Init()
	t.Cleanup(func() { cleanupConfigs(t, client, reg.Name) })
	if err := reg.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	vwc, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), reg.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := vwc.Webhooks[0].NamespaceSelector.MatchExpressions[0].Values; strings.Join(got, ",") != "kube-node-lease,kube-system" {
		t.Errorf("namespaceSelector excludes %q", got)
	}
	lease := func(namespace, name string) error {
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"jsinformer-test": "node-lease"}}}
		_, err := client.CoordinationV1().Leases(namespace).Create(t.Context(), l, metav1.CreateOptions{})
		if err == nil {
			_ = client.CoordinationV1().Leases(namespace).Delete(t.Context(), name, metav1.DeleteOptions{})
		}
		return err
	}
	// The entry applies once the API server's informers see it: a Lease elsewhere is denied.
	deadline := time.Now().Add(20 * time.Second)
	for err = lease(ns, "probe"); err == nil && time.Now().Before(deadline); err = lease(ns, "probe") {
		time.Sleep(100 * time.Millisecond)
	}
	if err == nil || !strings.Contains(err.Error(), "failed calling webhook") {
		t.Fatalf("a Lease in %s under a Fail entry nobody answers: %v, want refused", ns, err)
	}
	for _, excluded := range []string{"kube-node-lease", "kube-system"} {
		if err := lease(excluded, "jsinformer-test-node-lease"); err != nil {
			t.Errorf("a Lease in %s reached the webhook: %v", excluded, err)
		}
	}
}

// TestScaleReachesAScriptCoveringIt: a deployments policy is bypassed by the scale
// subresource unless the script covers it (admission.subresources); with it, `kubectl scale`
// reaches validate with ctx.subResource "scale" and the Scale as obj, and is denied.
func TestScaleReachesAScriptCoveringIt(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	script := &realScript{s: instantiateFor(t, `export default {
  validate(obj, ctx) {
    if (obj.spec.replicas > 3) return { allowed: false, message: "at most 3 replicas (" + ctx.subResource + " " + obj.kind + ")" };
  },
};`)}
	srv := NewServer(Config{Lookup: func(name string) (Script, bool) { return script, name == "max-replicas.js" }})
	url, ca := serveOnLoopback(t, srv)
	client := kubernetes.NewForConfigOrDie(cp.Config)
	ns := "adm-scale"
	newNamespace(t, client, ns)
	var subresources []string
	reg := &Registrar{Client: client, Name: "jsinformer-test-scale", Target: Target{URL: url}, CABundle: func() []byte { return ca },
		Entries: func() []Entry {
			return []Entry{{Script: "max-replicas.js", Validate: true, Namespaces: []string{ns},
				Spec:  scripting.AdmissionSpec{Operations: []string{"CREATE", "UPDATE"}, FailurePolicy: "Fail", TimeoutSeconds: 5, Subresources: subresources},
				Rules: []Rule{{Group: "apps", Version: "v1", Resource: "deployments", Namespaced: true}}}}
		}}
	reg.Init()
	t.Cleanup(func() { cleanupConfigs(t, client, reg.Name) })
	if err := reg.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	deployments := client.AppsV1().Deployments(ns)
	// The entry applies once the API server's informers see it: a Deployment of 5 is denied.
	deadline := time.Now().Add(20 * time.Second)
	err := createDeployment(t, deployments, 5)
	for ; err == nil && time.Now().Before(deadline); err = createDeployment(t, deployments, 5) {
		_ = deployments.Delete(t.Context(), "web", metav1.DeleteOptions{})
		time.Sleep(100 * time.Millisecond)
	}
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "at most 3 replicas ( Deployment)") {
		t.Fatalf("a Deployment of 5 replicas: %v, want denied", err)
	}
	if err := createDeployment(t, deployments, 1); err != nil {
		t.Fatal(err)
	}
	scale := func(n int32) error {
		s := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: n}}
		_, err := deployments.UpdateScale(t.Context(), "web", s, metav1.UpdateOptions{})
		return err
	}
	if err := scale(6); err != nil {
		t.Fatalf("scale without admission.subresources: %v, want allowed (the bypass the option closes)", err)
	}
	subresources = []string{"scale"}
	if err := reg.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(20 * time.Second)
	for err = scale(7); err == nil && time.Now().Before(deadline); err = scale(7) {
		time.Sleep(100 * time.Millisecond)
	}
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "at most 3 replicas (scale Scale)") {
		t.Fatalf("scale with admission.subresources [scale]: %v, want denied by the script seeing the Scale", err)
	}
	if err := scale(2); err != nil {
		t.Errorf("scale to 2: %v, want allowed", err)
	}
}

func createDeployment(t *testing.T, api appsv1client.DeploymentInterface, replicas int32) error {
	t.Helper()
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DeploymentSpec{Replicas: &replicas,
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.invalid/web:1"}}}}}}
	_, err := api.Create(t.Context(), d, metav1.CreateOptions{})
	return err
}

// TestAnEntryTheAPIServerRefusesIsLeftOutAlone: an entry the checks before writing did not
// catch, refused by kube-apiserver (its 422 names webhooks[i]), is left out and the others are
// written.
func TestAnEntryTheAPIServerRefusesIsLeftOutAlone(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	client := kubernetes.NewForConfigOrDie(cp.Config)
	reg := &Registrar{Client: client, Name: "jsinformer-test-refused", CABundle: func() []byte { return []byte("CA") },
		Target: Target{ServiceNamespace: "jsinformer-system", Service: "runner"}}
	reg.Init()
	t.Cleanup(func() { cleanupConfigs(t, client, reg.Name) })
	spec := scripting.AdmissionSpec{Operations: []string{"CREATE"}, FailurePolicy: "Ignore", TimeoutSeconds: 5}
	var hooks []admissionregv1.MutatingWebhook
	for _, script := range []string{"a.js", "b.js", "c.js"} {
		g := Group{Kind: "mutate", Scripts: []string{script}, Entry: Entry{Script: script, Mutate: true, Spec: spec, LabelSelector: neverMatched,
			Rules: []Rule{{Version: "v1", Resource: "configmaps", Namespaced: true}}}}
		hooks = append(hooks, reg.common(g, []byte("CA")).mutating())
	}
	bad := "/mutate/B.js" // as an older runner wrote it
	hooks[1].ClientConfig.Service.Path = &bad
	refused := map[string]string{}
	share := &sharing{answered: map[string]bool{}}
	err := withoutRefused(hooks, func(h admissionregv1.MutatingWebhook) string { return h.Name }, refused,
		func(hooks []admissionregv1.MutatingWebhook) error {
			return reg.applyMutating(t.Context(), hooks, share)
		})
	if err != nil {
		t.Fatal(err)
	}
	mwc, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(t.Context(), reg.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range mwc.Webhooks {
		names = append(names, w.Name)
	}
	if strings.Join(names, ",") != hooks[0].Name+","+hooks[2].Name || !strings.Contains(refused[hooks[1].Name], "/mutate/B.js") {
		t.Errorf("written %q, refused %q; want a.js and c.js written, b.js refused with the API server's reason", names, refused)
	}
}

// TestNamespaceSelectionReachesTheAPIServer: a script's admission.namespaceSelector and
// excludeNamespaces are in its registered namespaceSelector, on top of the namespaces no
// entry matches: under Fail with nobody answering, a ConfigMap is refused in a selected
// namespace only, not in one without the label, nor in an excluded one that has it.
func TestNamespaceSelectionReachesTheAPIServer(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	client := kubernetes.NewForConfigOrDie(cp.Config)
	const label = "jsinformer-test/selected"
	namespaces := map[string]map[string]string{"adm-sel-on": {label: "yes"}, "adm-sel-off": nil, "adm-sel-excluded": {label: "yes"}}
	for name, labels := range namespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
		if _, err := client.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	const selector = "jsinformer-test=namespace-selection"
	spec := scripting.AdmissionSpec{Operations: []string{"CREATE"}, FailurePolicy: "Fail", TimeoutSeconds: 2,
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{label: "yes"}}, ExcludeNamespaces: []string{"adm-sel-excluded"}}
	reg := &Registrar{Client: client, Name: "jsinformer-test-nssel", CABundle: func() []byte { return []byte("CA") },
		Target: Target{URL: "https://127.0.0.2:1"}, Exclude: []string{"runner-own"}, Entries: func() []Entry {
			return []Entry{{Script: "selected.js", Validate: true, LabelSelector: selector, Spec: spec,
				Rules: []Rule{{Version: "v1", Resource: "configmaps", Namespaced: true}}}}
		}}
	reg.Init()
	t.Cleanup(func() { cleanupConfigs(t, client, reg.Name) })
	if err := reg.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	vwc, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), reg.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := vwc.Webhooks[0].NamespaceSelector
	if ex := got.MatchExpressions; len(ex) != 1 || strings.Join(ex[0].Values, ",") != "adm-sel-excluded,kube-node-lease,kube-system,runner-own" ||
		got.MatchLabels[label] != "yes" {
		t.Errorf("namespaceSelector = %+v, want the exclusions in one NotIn and the script's matchLabels", got)
	}
	configMap := func(namespace string) error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-", Labels: map[string]string{"jsinformer-test": "namespace-selection"}}}
		_, err := client.CoreV1().ConfigMaps(namespace).Create(t.Context(), cm, metav1.CreateOptions{})
		return err
	}
	deadline := time.Now().Add(20 * time.Second)
	for err = configMap("adm-sel-on"); err == nil && time.Now().Before(deadline); err = configMap("adm-sel-on") {
		time.Sleep(100 * time.Millisecond)
	}
	if err == nil || !strings.Contains(err.Error(), "failed calling webhook") {
		t.Fatalf("a ConfigMap in a selected namespace under a Fail entry nobody answers: %v, want refused", err)
	}
	for _, ns := range []string{"adm-sel-off", "adm-sel-excluded"} {
		if err := configMap(ns); err != nil {
			t.Errorf("a ConfigMap in %s reached the webhook: %v", ns, err)
		}
	}
}
