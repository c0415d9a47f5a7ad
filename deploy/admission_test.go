package deploy_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// renderAdmission renders the base with the deploy/admission component, as docs/deploy.md
// shows, moved into ns (every name suffixed when suffix is set).
func renderAdmission(t *testing.T, ns, suffix string) []*unstructured.Unstructured {
	t.Helper()
	fsys := baseFS(t)
	kustomization := fmt.Sprintf("resources: [../deploy]\ncomponents: [../deploy/admission]\nnamespace: %q\n", ns)
	if suffix != "" {
		kustomization += fmt.Sprintf("nameSuffix: %q\n", "-"+suffix)
	}
	if err := fsys.WriteFile("/overlay/kustomization.yaml", []byte(kustomization)); err != nil {
		t.Fatal(err)
	}
	return render(t, fsys, "/overlay")
}

// named returns the one rendered object of kind and name.
func named(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s rendered", kind, name)
	return nil
}

// The component's parts fit together: the Service's port 443 reaches the container's webhook
// port, which is the runner's --webhook-addr default; the runner registers that Service in
// its own namespace; it stops without refusing a connection; one replica always serves.
func TestAdmissionComponentWiring(t *testing.T) {
	t.Parallel()
	objs := renderAdmission(t, "ops", "")
	var svc corev1.Service
	decode(t, named(t, objs, "Service", "jsinformer-webhook"), &svc)
	var d appsv1.Deployment
	decode(t, find(t, objs, "Deployment"), &d)
	c := d.Spec.Template.Spec.Containers[0]
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 443 || svc.Spec.Ports[0].TargetPort != intstr.FromString("webhook") {
		t.Errorf("Service ports %+v, want 443 to the webhook port", svc.Spec.Ports)
	}
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == "webhook" && p.ContainerPort == 9443 }) {
		t.Errorf("container ports %+v, want webhook 9443 (--webhook-addr's default)", c.Ports)
	}
	if !labelsMatch(svc.Spec.Selector, d.Spec.Template.Labels) {
		t.Errorf("Service selector %v does not select the pods %v", svc.Spec.Selector, d.Spec.Template.Labels)
	}
	checkWebhookArgs(t, c, svc.Name)
	checkGracefulStop(t, &d)
	var pdb policyv1.PodDisruptionBudget
	decode(t, find(t, objs, "PodDisruptionBudget"), &pdb)
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() < 1 || d.Spec.Replicas == nil || *d.Spec.Replicas <= int32(pdb.Spec.MinAvailable.IntValue()) {
		t.Errorf("PDB minAvailable %v with %v replicas: want one replica serving during a drain, and a drain possible", pdb.Spec.MinAvailable, d.Spec.Replicas)
	}
}

func labelsMatch(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return len(selector) > 0
}

// checkWebhookArgs: --webhook-service names the Service in the pod's namespace (through the
// variables the container defines), and --webhook-name the configurations rbac.yaml grants.
func checkWebhookArgs(t *testing.T, c corev1.Container, service string) {
	t.Helper()
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace" {
			env[e.Name] = "<namespace>"
		}
	}
	var got []string
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--webhook-") {
			for k, v := range env {
				a = strings.ReplaceAll(a, "$("+k+")", v)
			}
			got = append(got, a)
		}
	}
	want := []string{"--webhook-service=<namespace>/" + service, "--webhook-name=jsinformer"}
	if !slices.Equal(got, want) {
		t.Errorf("webhook args (variables expanded) %q, want %q", got, want)
	}
}

// checkGracefulStop: a preStop sleep (the image has no shell) keeps the pod answering while it
// leaves the Service's endpoints, and the grace period covers it, the runner's shutdown delay
// (5 s) and the base's 30 s for handlers and the Lease.
func checkGracefulStop(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	c := d.Spec.Template.Spec.Containers[0]
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil || c.Lifecycle.PreStop.Exec != nil {
		t.Fatalf("preStop %+v, want the kubelet's sleep action (no exec: the image has no shell)", c.Lifecycle)
	}
	sleep := c.Lifecycle.PreStop.Sleep.Seconds
	if sleep < 5 {
		t.Errorf("preStop sleeps %d s, want at least 5 (endpoints take seconds to drop a pod)", sleep)
	}
	grace := d.Spec.Template.Spec.TerminationGracePeriodSeconds
	if grace == nil || *grace < sleep+5+30 {
		t.Errorf("terminationGracePeriodSeconds %v, want at least %d", grace, sleep+5+30)
	}
}

// The NetworkPolicy lets only its ipBlock reach the webhook port of the runner's pods, and
// leaves the metrics port open; the shipped ipBlock is a placeholder no API server has.
func TestAdmissionNetworkPolicy(t *testing.T) {
	t.Parallel()
	objs := renderAdmission(t, "ops", "")
	var np networkingv1.NetworkPolicy
	decode(t, named(t, objs, "NetworkPolicy", "jsinformer-webhook"), &np)
	var d appsv1.Deployment
	decode(t, find(t, objs, "Deployment"), &d)
	if !labelsMatch(np.Spec.PodSelector.MatchLabels, d.Spec.Template.Labels) || !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) {
		t.Fatalf("NetworkPolicy selects %v for %v, want the runner's pods, ingress", np.Spec.PodSelector, np.Spec.PolicyTypes)
	}
	var webhook, metrics int
	for _, rule := range np.Spec.Ingress {
		for _, p := range rule.Ports {
			switch *p.Port {
			case intstr.FromString("webhook"):
				webhook++
				if len(rule.From) != 1 || rule.From[0].IPBlock == nil || rule.From[0].IPBlock.CIDR != "192.0.2.0/24" {
					t.Errorf("the webhook port is open to %+v, want the placeholder ipBlock only", rule.From)
				}
			case intstr.FromString("metrics"):
				metrics++
			default:
				t.Errorf("unexpected port %v", p.Port)
			}
		}
	}
	if webhook != 1 || metrics != 1 {
		t.Errorf("%d rules for the webhook port and %d for metrics, want one each", webhook, metrics)
	}
}

// TestAdmissionComponentServerSideDryRun is `kubectl kustomize | kubectl apply --dry-run=server`
// of an overlay with the component: every object passes validation (strict fields) and
// admission with no warning (restricted Pod Security Standard included).
func TestAdmissionComponentServerSideDryRun(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	objs := renderAdmission(t, "deploy-admission-"+uniqueSuffix(t), "")
	cfg := rest.CopyConfig(cp.Config)
	seen := &warnings{}
	cfg.WarningHandler = seen
	c := newCluster(t, cfg)
	c.createNamespace(t, objs)
	var errs []string
	for _, obj := range objs {
		if obj.GetKind() == "Namespace" {
			continue
		}
		if err := c.create(t, obj, true); err != nil {
			errs = append(errs, obj.GetKind()+" "+obj.GetName()+": "+err.Error())
		}
	}
	expect(t, "error", errs, "")
	expect(t, "warning", seen.take(), "")
}

// TestAdmissionComponentPermissions creates the component's RBAC for real and asks, as its
// ServiceAccount, what it may do: the runner's own webhook configurations and TLS Secret,
// nothing else of either kind.
func TestAdmissionComponentPermissions(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	suffix := uniqueSuffix(t)
	ns := "deploy-admission-rbac-" + suffix
	objs := renderAdmission(t, ns, suffix)
	admin := newCluster(t, cp.Config)
	admin.createNamespace(t, objs)
	for _, o := range objs {
		if !slices.Contains(rbacKinds, o.GetKind()) {
			continue
		}
		if err := admin.create(t, o, false); err != nil {
			t.Fatalf("create %s %s: %v", o.GetKind(), o.GetName(), err)
		}
		if o.GetNamespace() == "" {
			t.Cleanup(func() { _ = admin.resource(t, o).Delete(context.Background(), o.GetName(), metav1.DeleteOptions{}) })
		}
	}
	var role rbacv1.ClusterRole
	decode(t, named(t, objs, "ClusterRole", "jsinformer-admission-"+suffix), &role)
	client := kubernetes.NewForConfigOrDie(serviceAccountConfig(t, cp.Config, ns, "jsinformer-"+suffix))
	const reg = "admissionregistration.k8s.io"
	tests := []struct {
		verb, group, resource, namespace, name string
		allowed                                bool
	}{
		{"create", reg, "validatingwebhookconfigurations", "", "", true},
		{"create", reg, "mutatingwebhookconfigurations", "", "", true},
		{"get", reg, "validatingwebhookconfigurations", "", "jsinformer", true},
		{"update", reg, "mutatingwebhookconfigurations", "", "jsinformer", true},
		{"delete", reg, "validatingwebhookconfigurations", "", "jsinformer", true},
		{"update", reg, "validatingwebhookconfigurations", "", "someone-elses", false},
		{"delete", reg, "mutatingwebhookconfigurations", "", "someone-elses", false},
		{"list", reg, "validatingwebhookconfigurations", "", "", false},
		{"create", "", "secrets", ns, "", true},
		{"get", "", "secrets", ns, "jsinformer-tls", true},
		{"update", "", "secrets", ns, "jsinformer-tls", true},
		{"get", "", "secrets", ns, "other", false},
		{"get", "", "secrets", "default", "jsinformer-tls", false},
	}
	for i, tt := range tests {
		attrs := &authorizationv1.ResourceAttributes{Verb: tt.verb, Group: tt.group, Resource: tt.resource, Namespace: tt.namespace, Name: tt.name}
		if got := allowed(t, client, attrs, i == 0); got != tt.allowed {
			t.Errorf("%s %s %q in %q: allowed %v, want %v", tt.verb, tt.resource, tt.name, tt.namespace, got, tt.allowed)
		}
	}
	// Granted by name, as the runner names them: --webhook-name and its Secret.
	if !slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool { return slices.Equal(r.ResourceNames, []string{"jsinformer"}) }) {
		t.Errorf("ClusterRole rules %+v grant no configuration named jsinformer", role.Rules)
	}
}

// TestDocumentedAdmissionOverlay renders the overlay docs/deploy.md shows for admission: the
// component's webhook flags, and the NetworkPolicy opened to the control plane's CIDR only.
func TestDocumentedAdmissionOverlay(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml\n(# my-jsinformer/kustomization.yaml, with admission\n.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/deploy.md has no yaml block starting with # my-jsinformer/kustomization.yaml, with admission")
	}
	fsys := baseFS(t)
	for path, data := range map[string][]byte{
		"/my-jsinformer/kustomization.yaml":            m[1],
		"/my-jsinformer/scripts/require-team-label.js": []byte("export default { watch: \"apps/v1/deployments\", validate() {} };\n"),
	} {
		if err := fsys.WriteFile(path, data); err != nil {
			t.Fatal(err)
		}
	}
	objs := render(t, fsys, "/my-jsinformer")
	var np networkingv1.NetworkPolicy
	decode(t, named(t, objs, "NetworkPolicy", "jsinformer-webhook"), &np)
	if from := np.Spec.Ingress[0].From; len(from) != 1 || from[0].IPBlock == nil || from[0].IPBlock.CIDR != "10.0.0.0/24" {
		t.Errorf("webhook port open to %+v, want the documented 10.0.0.0/24", from)
	}
	var d appsv1.Deployment
	decode(t, find(t, objs, "Deployment"), &d)
	checkWebhookArgs(t, d.Spec.Template.Spec.Containers[0], "jsinformer-webhook")
}
