package deploy_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// TestBaseRendersEveryObject checks the base holds what docs/deploy.md promises, and nothing
// kustomize would silently drop.
func TestBaseRendersEveryObject(t *testing.T) {
	t.Parallel()
	var kinds []string
	for _, o := range renderBase(t) {
		kinds = append(kinds, o.GetKind())
		if ns := o.GetNamespace(); ns != "" && ns != "jsinformer" {
			t.Errorf("%s %s is in namespace %q, want jsinformer", o.GetKind(), o.GetName(), ns)
		}
	}
	sort.Strings(kinds)
	want := []string{"ClusterRole", "ClusterRole", "ClusterRole", "ClusterRoleBinding", "ClusterRoleBinding", "ConfigMap", "Deployment", "Namespace",
		"PodDisruptionBudget", "Role", "RoleBinding", "Service", "ServiceAccount"}
	if !slices.Equal(kinds, want) {
		t.Fatalf("rendered kinds %v, want %v", kinds, want)
	}
}

// runner decodes the base's Deployment and returns it with its one container.
func runner(t *testing.T) (*appsv1.Deployment, corev1.Container) {
	t.Helper()
	var d appsv1.Deployment
	decode(t, find(t, renderBase(t), "Deployment"), &d)
	if n := len(d.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("deployment has %d containers, want 1", n)
	}
	return &d, d.Spec.Template.Spec.Containers[0]
}

func TestDeploymentRunsTwoLeaderElectedReplicas(t *testing.T) {
	t.Parallel()
	d, c := runner(t)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("replicas = %v, want 2", d.Spec.Replicas)
	}
	for _, arg := range []string{"--leader-elect", "--scripts=/scripts", "--metrics-addr=:9090",
		"--leader-elect-resource-namespace=$(POD_NAMESPACE)"} {
		if !slices.Contains(c.Args, arg) {
			t.Errorf("args %q lack %q", c.Args, arg)
		}
	}
	if c.Image != "jsinformer:latest" {
		t.Errorf("image %q, want jsinformer:latest (what make image tags)", c.Image)
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	if f := env["POD_NAMESPACE"].ValueFrom; f == nil || f.FieldRef == nil || f.FieldRef.FieldPath != "metadata.namespace" {
		t.Errorf("POD_NAMESPACE = %+v, want the downward API's metadata.namespace", env["POD_NAMESPACE"])
	}
	if f := env["GOMEMLIMIT"].ValueFrom; f == nil || f.ResourceFieldRef == nil || f.ResourceFieldRef.Resource != "limits.memory" {
		t.Errorf("GOMEMLIMIT = %+v, want the container's limits.memory", env["GOMEMLIMIT"])
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if c.Resources.Requests.Name(r, "").IsZero() || c.Resources.Limits.Name(r, "").IsZero() {
			t.Errorf("%s: requests %v, limits %v: want both", r, c.Resources.Requests, c.Resources.Limits)
		}
	}
}

func TestDeploymentProbesAndMetricsPort(t *testing.T) {
	t.Parallel()
	d, c := runner(t)
	if len(c.Ports) != 1 || c.Ports[0].Name != "metrics" || c.Ports[0].ContainerPort != 9090 {
		t.Fatalf("ports %+v, want one named metrics on 9090 (--metrics-addr=:9090)", c.Ports)
	}
	probes := []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"liveness", c.LivenessProbe, "/healthz"}, {"readiness", c.ReadinessProbe, "/readyz"}}
	for _, p := range probes {
		if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port.String() != "metrics" {
			t.Errorf("%s probe %+v, want GET %s on port metrics", p.name, p.probe, p.path)
		}
	}
	want := map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "9090", "prometheus.io/path": "/metrics"}
	for k, v := range want {
		if got := d.Spec.Template.Annotations[k]; got != v {
			t.Errorf("pod annotation %s = %q, want %q", k, got, v)
		}
	}
}

func TestDeploymentIsLockedDown(t *testing.T) {
	t.Parallel()
	d, c := runner(t)
	pod, sc := d.Spec.Template.Spec.SecurityContext, c.SecurityContext
	checks := []struct {
		what string
		ok   bool
	}{
		{"pod runAsNonRoot", pod != nil && pod.RunAsNonRoot != nil && *pod.RunAsNonRoot},
		{"pod runAsUser 65532 (the image's user)", pod != nil && pod.RunAsUser != nil && *pod.RunAsUser == 65532},
		{"pod seccomp RuntimeDefault", pod != nil && pod.SeccompProfile != nil && pod.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault},
		{"container readOnlyRootFilesystem", sc != nil && sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem},
		{"container allowPrivilegeEscalation false", sc != nil && sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation},
		{"container drops ALL capabilities", sc != nil && sc.Capabilities != nil && slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) && len(sc.Capabilities.Add) == 0},
		{"service account jsinformer", d.Spec.Template.Spec.ServiceAccountName == "jsinformer"},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("want %s", c.what)
		}
	}
}

// TestScriptsMountedAsFolder checks the scripts reach the runner as the kubelet's ..data-swapped
// folder (the whole ConfigMap: no items, which would hide keys added later, and no subPath,
// which the kubelet never updates), from a ConfigMap with a fixed name holding every file of
// deploy/scripts.
func TestScriptsMountedAsFolder(t *testing.T) {
	t.Parallel()
	objs := renderBase(t)
	var d appsv1.Deployment
	decode(t, find(t, objs, "Deployment"), &d)
	var cm corev1.ConfigMap
	decode(t, find(t, objs, "ConfigMap"), &cm)
	if cm.Name != "jsinformer-scripts" {
		t.Errorf("scripts ConfigMap is named %q, want the fixed jsinformer-scripts (no hash suffix: updates hot-reload in place)", cm.Name)
	}
	var vol *corev1.Volume
	for i, v := range d.Spec.Template.Spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == cm.Name {
			vol = &d.Spec.Template.Spec.Volumes[i]
		}
	}
	if vol == nil || len(vol.ConfigMap.Items) != 0 {
		t.Fatalf("volumes %+v: want ConfigMap %s as a whole folder", d.Spec.Template.Spec.Volumes, cm.Name)
	}
	mounted := slices.ContainsFunc(d.Spec.Template.Spec.Containers[0].VolumeMounts, func(m corev1.VolumeMount) bool {
		return m.Name == vol.Name && m.MountPath == "/scripts" && m.SubPath == "" && m.ReadOnly
	})
	if !mounted {
		t.Errorf("volume %s is not mounted read-only at /scripts without subPath", vol.Name)
	}
	files, err := os.ReadDir("scripts")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join("scripts", f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if cm.Data[f.Name()] != string(data) {
			t.Errorf("ConfigMap lacks scripts/%s or differs from it: list it in kustomization.yaml", f.Name())
		}
	}
	if len(cm.Data) != len(files) {
		t.Errorf("ConfigMap has %d keys, scripts/ %d files", len(cm.Data), len(files))
	}
}

// TestShippedScriptsAreExamples keeps deploy/scripts a copy of examples/scripts, whose tests
// prove the scripts work; kustomize cannot read files outside deploy/, hence the copy.
func TestShippedScriptsAreExamples(t *testing.T) {
	t.Parallel()
	files, err := os.ReadDir("scripts")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		shipped, err := os.ReadFile(filepath.Join("scripts", f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		example, err := os.ReadFile(filepath.Join("..", "examples", "scripts", f.Name()))
		if err != nil || !bytes.Equal(shipped, example) {
			t.Errorf("deploy/scripts/%s differs from examples/scripts/%s (%v): copy it again", f.Name(), f.Name(), err)
		}
	}
}

// TestSelectorsMatchThePods checks the PodDisruptionBudget and the metrics Service select the
// runner's pods.
func TestSelectorsMatchThePods(t *testing.T) {
	t.Parallel()
	objs := renderBase(t)
	var d appsv1.Deployment
	decode(t, find(t, objs, "Deployment"), &d)
	podLabels := labels.Set(d.Spec.Template.Labels)
	var pdb policyv1.PodDisruptionBudget
	decode(t, find(t, objs, "PodDisruptionBudget"), &pdb)
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 || pdb.Spec.Selector == nil ||
		!labels.SelectorFromSet(pdb.Spec.Selector.MatchLabels).Matches(podLabels) {
		t.Errorf("PodDisruptionBudget %+v: want minAvailable 1 over the runner's pods %v", pdb.Spec, podLabels)
	}
	var svc corev1.Service
	decode(t, find(t, objs, "Service"), &svc)
	if len(svc.Spec.Selector) == 0 || !labels.SelectorFromSet(svc.Spec.Selector).Matches(podLabels) {
		t.Errorf("Service selector %v does not select the runner's pods %v", svc.Spec.Selector, podLabels)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "metrics" || svc.Spec.Ports[0].TargetPort.String() != "metrics" {
		t.Errorf("Service ports %+v, want one named metrics targeting the metrics port", svc.Spec.Ports)
	}
}
