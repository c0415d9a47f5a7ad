package deploy_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// leaseName is --leader-elect-resource-name's default, which rbac.yaml's Role names.
const leaseName = "jsinformer"

// rbacKinds are the rendered objects that make up the runner's identity and permissions.
var rbacKinds = []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}

// TestPermissionsSufficeForShippedScripts creates the base's ServiceAccount and RBAC for real,
// signs in with a token of that ServiceAccount, as the pod would, and checks the permissions
// both ways: the shipped scripts sync and do their writes, leader election may use its Lease,
// and what no shipped script needs is refused.
func TestPermissionsSufficeForShippedScripts(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	suffix := uniqueSuffix(t)
	ns := "deploy-rbac-" + suffix
	objs := renderOverlay(t, ns, suffix)
	admin := newCluster(t, cp.Config)
	admin.createNamespace(t, objs)
	for _, kind := range rbacKinds {
		obj := find(t, objs, kind)
		if err := admin.create(t, obj, false); err != nil {
			t.Fatalf("create %s: %v", kind, err)
		}
		if obj.GetNamespace() == "" {
			t.Cleanup(func() { _ = admin.resource(t, obj).Delete(context.Background(), obj.GetName(), metav1.DeleteOptions{}) })
		}
	}
	sa := serviceAccountConfig(t, cp.Config, ns, find(t, objs, "ServiceAccount").GetName())
	checkAccess(t, sa, ns)
	runShippedScripts(t, sa, cp.Config, ns)
}

// serviceAccountConfig reaches the API server with a fresh token of the ServiceAccount.
func serviceAccountConfig(t *testing.T, admin *rest.Config, ns, name string) *rest.Config {
	t.Helper()
	client := kubernetes.NewForConfigOrDie(admin)
	tr, err := client.CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("request a token for %s/%s: %v", ns, name, err)
	}
	return &rest.Config{Host: admin.Host, BearerToken: tr.Status.Token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
}

// checkAccess asks the API server, as the ServiceAccount, what it may do.
func checkAccess(t *testing.T, sa *rest.Config, ns string) {
	t.Helper()
	client := kubernetes.NewForConfigOrDie(sa)
	tests := []struct {
		verb, group, resource, namespace, name string
		allowed                                bool
	}{
		{"watch", "apps", "deployments", "", "", true},
		{"list", "", "configmaps", "", "", true},
		{"delete", "", "configmaps", "default", "x", true},
		{"delete", "batch", "jobs", "default", "x", true},
		{"create", "", "events", "default", "", false}, // no shipped script records Events
		{"create", "coordination.k8s.io", "leases", ns, "", true},
		{"get", "coordination.k8s.io", "leases", ns, "jsinformer", true},
		{"update", "coordination.k8s.io", "leases", ns, "jsinformer", true},
		{"update", "coordination.k8s.io", "leases", ns, "other", false},
		{"update", "coordination.k8s.io", "leases", "default", "jsinformer", false},
		{"list", "", "secrets", "", "", false},
		{"patch", "apps", "deployments", "default", "x", false},
		{"create", "", "configmaps", "default", "", false},
	}
	for i, tt := range tests {
		attrs := &authorizationv1.ResourceAttributes{Verb: tt.verb, Group: tt.group, Resource: tt.resource, Namespace: tt.namespace, Name: tt.name}
		// The first check waits for the new bindings to reach the authorizer's cache.
		wait := i == 0
		if got := allowed(t, client, attrs, wait); got != tt.allowed {
			t.Errorf("%s %s.%s %q in %q: allowed %v, want %v", tt.verb, tt.resource, tt.group, tt.name, tt.namespace, got, tt.allowed)
		}
	}
}

func allowed(t *testing.T, client kubernetes.Interface, attrs *authorizationv1.ResourceAttributes, wait bool) bool {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: attrs}}
		got, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(t.Context(), review, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("self subject access review: %v", err)
		}
		if got.Status.Allowed || !wait || time.Now().After(deadline) {
			return got.Status.Allowed
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// runShippedScripts runs the engine on deploy/scripts with the ServiceAccount's credentials and
// leader election on, as the Deployment runs it: every watch must sync (ready), the runner must
// take the Lease in its namespace, and as leader 07-ttl-cleanup must delete an expired ConfigMap.
func runShippedScripts(t *testing.T, sa, admin *rest.Config, ns string) {
	t.Helper()
	logs := &syncBuffer{}
	ready := make(chan struct{})
	e, err := engine.New(engine.Config{
		RESTConfig: sa, ScriptsDir: "scripts", Logger: slog.New(slog.NewTextHandler(logs, nil)),
		LeaderElection: &engine.LeaderElection{Namespace: ns, Name: leaseName, Identity: "deploy-test"},
		OnReady:        func() { close(ready) },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("engine: %v", err)
		}
	}()
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		t.Fatalf("the shipped scripts did not sync within 60s as the ServiceAccount\n%s", logs)
	}
	expired := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "expired", Namespace: ns,
		Annotations: map[string]string{"jsinformer.io/ttl": "2000-01-01T00:00:00Z"}}}
	client := kubernetes.NewForConfigOrDie(admin)
	if _, err := client.CoreV1().ConfigMaps(ns).Create(t.Context(), expired, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, client, ns, expired.Name, logs)
	lease, err := client.CoordinationV1().Leases(ns).Get(t.Context(), leaseName, metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != "deploy-test" {
		t.Errorf("Lease %s/%s: %+v (%v), want it held by the runner", ns, leaseName, lease, err)
	}
	if strings.Contains(strings.ToLower(logs.String()), "forbidden") {
		t.Errorf("the runner was refused something:\n%s", logs)
	}
}

func waitGone(t *testing.T, client kubernetes.Interface, ns, name string, logs *syncBuffer) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := client.CoreV1().ConfigMaps(ns).Get(t.Context(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("07-ttl-cleanup did not delete the expired ConfigMap %s/%s within 30s (last get: %v)\n%s", ns, name, err, logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer safe for the engine's goroutines to log into.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
