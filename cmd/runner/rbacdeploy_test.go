package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// TestGeneratedRBACDeploysAndSuffices generates the RBAC of a folder with an admission policy,
// a script that reads a Secret by name in the runner's namespace and watches: the file builds
// with kustomize unchanged, applies with server-side apply, and the runner, started with the
// same flags under exactly that ServiceAccount, registers its webhooks, serves them, does its
// read, and its permission check (asking with the names it uses) finds nothing missing.
func TestGeneratedRBACDeploysAndSuffices(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	admin := kubernetes.NewForConfigOrDie(cp.Config)
	suffix := fmt.Sprint(time.Now().UnixNano() % 1e8)
	ns, sa, hook := "rbac-deploy-"+suffix, "runner-"+suffix, "jsinformer-rbac-"+suffix
	const own = "default" // the runner's namespace (podNamespace) outside a pod
	admissionNamespace(t, admin, ns, hook)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "slack-" + suffix, Namespace: own}, StringData: map[string]string{"url": "x"}}
	if _, err := admin.CoreV1().Secrets(own).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.CoreV1().Secrets(own).Delete(context.Background(), secret.Name, metav1.DeleteOptions{})
	})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "first", Namespace: ns}}
	if _, err := admin.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := rbacDeployFolder(t, ns, secret.Name)
	addr := freePort(t)
	flags := []string{"--webhook-url", "https://" + addr, "--webhook-name", hook}
	file, stderr, err := executeSplit(t, append([]string{"rbac", "--scripts", dir, "--service-account", own + "/" + sa}, flags...)...)
	if err != nil {
		t.Fatalf("runner rbac: %v\n%s", err, stderr)
	}
	objs := decodeObjects(t, file)
	kustomizeUnchanged(t, file, objs)
	serverSideApply(t, cp.Config, objs)

	e, logs := startUnder(t, serviceAccountREST(t, cp.Config, own, sa), dir, webhookFlags{addr: addr, url: "https://" + addr, name: hook})
	denied := func() bool {
		_, err := admin.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bad"}}, metav1.CreateOptions{})
		return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "no bad names")
	}
	pollFor(t, "the policy to deny through the registered webhook", logs, denied)
	pollFor(t, "the permission check to answer every need", logs, e.PermissionsChecked)
	missing, refused := e.Permissions()
	if len(missing) != 0 || len(refused) != 0 {
		t.Errorf("under the generated RBAC the runner lacks %v and was refused %v\n%s", missing, refused, logs)
	}
	if _, err := admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), hook, metav1.GetOptions{}); err != nil {
		t.Errorf("the webhook configuration %s: %v", hook, err)
	}
}

// rbacDeployFolder: a validate-only policy on ConfigMaps of ns that reads no cache, and a
// script watching them that reads a Secret of the runner's namespace by a constant name.
func rbacDeployFolder(t *testing.T, ns, secret string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"policy.js": policyScript(ns, `    if (obj.metadata.name === "bad") return { allowed: false, message: "no bad names" };`,
			`{ failurePolicy: "Ignore", timeoutSeconds: 5 }`),
		"reader.js": fmt.Sprintf("export default {\n  watch: { resource: \"v1/configmaps\", namespace: %q },\n"+
			"  onAdd() { k8s.get(\"v1/secrets\", \"default\", %q); },\n};\n", ns, secret),
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// decodeObjects reads the YAML documents of file.
func decodeObjects(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	dec := yaml.NewYAMLOrJSONDecoder(strings.NewReader(file), 4096)
	var out []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		err := dec.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("decode the generated file: %v", err)
		}
		out = append(out, obj)
	}
}

// kustomizeUnchanged builds a kustomization of the file alone, as `kubectl kustomize` would:
// it must succeed (no two objects of one ID) and give back the file's objects.
func kustomizeUnchanged(t *testing.T, file string, want []*unstructured.Unstructured) {
	t.Helper()
	fsys := filesys.MakeFsInMemory()
	for path, data := range map[string]string{"/k/rbac.yaml": file, "/k/kustomization.yaml": "resources: [rbac.yaml]\n"} {
		if err := fsys.WriteFile(path, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fsys, "/k")
	if err != nil {
		t.Fatalf("kustomize build: %v\n%s", err, file)
	}
	got := m.Resources()
	if len(got) != len(want) {
		t.Fatalf("kustomize gave %d objects, the file holds %d", len(got), len(want))
	}
	for i, r := range got {
		obj, err := r.Map()
		if err == nil && !reflect.DeepEqual(normalize(t, obj), normalize(t, want[i].Object)) {
			err = fmt.Errorf("changed:\n%v\nwant\n%v", obj, want[i].Object)
		}
		if err != nil {
			t.Errorf("kustomize %s: %v", r.CurId(), err)
		}
	}
}

// normalize is obj through JSON, so that both sides have the same number and slice types.
func normalize(t *testing.T, obj map[string]any) map[string]any {
	t.Helper()
	data, err := (&unstructured.Unstructured{Object: obj}).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return out.Object
}

// rbacResources maps the kinds `runner rbac` prints to their resources.
var rbacResources = map[string]schema.GroupVersionResource{
	"ServiceAccount":     {Version: "v1", Resource: "serviceaccounts"},
	"ClusterRole":        {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	"ClusterRoleBinding": {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	"Role":               {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	"RoleBinding":        {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
}

// serverSideApply is `kubectl apply --server-side -f` of objs, for real (removed at cleanup).
func serverSideApply(t *testing.T, cfg *rest.Config, objs []*unstructured.Unstructured) {
	t.Helper()
	dyn := dynamic.NewForConfigOrDie(cfg)
	for _, obj := range objs {
		gvr, ok := rbacResources[obj.GetKind()]
		if !ok {
			t.Fatalf("unexpected kind %s in the generated file", obj.GetKind())
		}
		var api dynamic.ResourceInterface = dyn.Resource(gvr)
		if ns := obj.GetNamespace(); ns != "" {
			api = dyn.Resource(gvr).Namespace(ns)
		}
		opts := metav1.ApplyOptions{FieldManager: "kubectl", Force: true}
		if _, err := api.Apply(t.Context(), obj.GetName(), obj, opts); err != nil {
			t.Fatalf("server-side apply %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
		t.Cleanup(func() { _ = api.Delete(context.Background(), obj.GetName(), metav1.DeleteOptions{}) })
	}
}

// serviceAccountREST reaches the API server with a fresh token of the ServiceAccount.
func serviceAccountREST(t *testing.T, admin *rest.Config, ns, name string) *rest.Config {
	t.Helper()
	tr, err := kubernetes.NewForConfigOrDie(admin).CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), name,
		&authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("request a token for %s/%s: %v", ns, name, err)
	}
	return &rest.Config{Host: admin.Host, BearerToken: tr.Status.Token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
}

// startUnder runs the runner's engine and webhooks with cfg's identity, wired by newEngine
// as run wires them, with a quick permission check; stopped at cleanup.
func startUnder(t *testing.T, cfg *rest.Config, dir string, hooks webhookFlags) (*engine.Engine, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	o := &options{webhook: hooks}
	cmd := &cobra.Command{}
	ctx, cancel := context.WithCancel(context.Background())
	cmd.SetContext(ctx)
	e, h, err := o.newEngine(cmd, engine.Config{RESTConfig: cfg, ScriptsDir: dir, Logger: logger, HandlerTimeout: 2 * time.Second,
		Debounce: 20 * time.Millisecond, PermissionCheckInterval: 200 * time.Millisecond})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- h.runEngine(ctx, e) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("engine Run: %v", err)
		}
		h.stop()
	})
	return e, logs
}

// pollFor waits for cond, failing with the logs after 30s.
func pollFor(t *testing.T, what string, logs fmt.Stringer, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s\n%s", what, logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kustomizeNamespaceRecipe is docs/permissions.md's kustomization for a generated file whose
// runner's namespace is left to kustomize (--service-account NAME) beside Roles that name
// their own.
const kustomizeNamespaceRecipe = `resources: [rbac.yaml]
transformers:
  - |-
    apiVersion: builtin
    kind: NamespaceTransformer
    metadata: {name: runner-namespace, namespace: ops}
    unsetOnly: true
    setRoleBindingSubjects: allServiceAccounts
`

// TestRBACKustomizeNamespace: with the namespace left to kustomize, a Role for another
// namespace is warned about (kustomize's plain namespace: moves it, here into a conflict with
// the runner's own), and the documented NamespaceTransformer keeps every Role where it
// belongs, bound to the ServiceAccount in the runner's namespace.
func TestRBACKustomizeNamespace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := "export default { watch: { resource: \"v1/configmaps\", namespace: \"web\" }, onAdd() {} };\n"
	if err := os.WriteFile(filepath.Join(dir, "a.js"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	file, stderr, err := executeSplit(t, "rbac", "--scripts", dir, "--service-account", "runner", "--leader-elect")
	if err != nil || !strings.Contains(stderr, "warning: the Roles for namespaces web name their namespace") {
		t.Fatalf("%v; stderr %q lacks the warning", err, stderr)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "permissions.md"))
	if err != nil || !strings.Contains(string(doc), kustomizeNamespaceRecipe) {
		t.Errorf("docs/permissions.md does not show the kustomization tested here (%v)", err)
	}
	for _, tt := range []struct {
		name, kustomization, wantErr string
		where                        map[string]string // kind/name -> namespace
	}{
		{"plain namespace:", "resources: [rbac.yaml]\nnamespace: ops\n", "ID conflict", nil},
		{"the documented transformer", kustomizeNamespaceRecipe, "", map[string]string{"Role/web": "web", "RoleBinding/web": "web",
			"Role/ops": "ops", "RoleBinding/ops": "ops", "ServiceAccount/ops": "ops"}},
	} {
		fsys := filesys.MakeFsInMemory()
		_ = fsys.WriteFile("/k/rbac.yaml", []byte(file))
		_ = fsys.WriteFile("/k/kustomization.yaml", []byte(tt.kustomization))
		m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fsys, "/k")
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got := map[string]string{}
		for _, r := range m.Resources() {
			got[r.GetKind()+"/"+r.GetNamespace()] = r.GetNamespace()
			for _, s := range subjects(t, r.MustYaml()) {
				if s != "ops" {
					t.Errorf("%s: %s %s binds a ServiceAccount of namespace %q, want ops", tt.name, r.GetKind(), r.GetNamespace(), s)
				}
			}
		}
		for k, ns := range tt.where {
			if got[k] != ns {
				t.Errorf("%s: %s not in %s: %v", tt.name, k, ns, got)
			}
		}
	}
}

// subjects are the namespaces of a binding's subjects.
func subjects(t *testing.T, doc string) []string {
	t.Helper()
	var obj struct {
		Subjects []struct{ Namespace string } `json:"subjects"`
	}
	if err := yaml.NewYAMLOrJSONDecoder(strings.NewReader(doc), 4096).Decode(&obj); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range obj.Subjects {
		out = append(out, s.Namespace)
	}
	return out
}
