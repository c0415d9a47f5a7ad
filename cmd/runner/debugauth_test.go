package main

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// On a non-loopback address the API server decides: 401 without a token it accepts, 403
// without the ClusterRole deploy/debug-rbac.yaml grants, reading with the reader role, actions
// only with the operator role; all over TLS.
func TestDebugAuthorizedByTheAPIServer(t *testing.T) {
	// Not parallel: runners in one process share klog's global logger.
	cp := controlplane.Require(t, env)
	client, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(freeAddr(t))
	// All interfaces: not loopback, so authorized; reached here through 127.0.0.1.
	d := startDebugEnv(t, "--debug-addr", "0.0.0.0:"+port)
	base := "https://127.0.0.1:" + port
	waitOutput(t, d.out, "authorized_by_api_server=true")

	ns, sa := d.ns, "viewer"
	if _, err := client.CoreV1().ServiceAccounts(ns).Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := client.CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	token := tr.Status.Token
	roles := debugRoles(t)
	suffix := "-" + ns

	tests := []struct {
		name, method, path, token, bind string
		want                            int
	}{
		{"no token", http.MethodGet, "/debug/status", "", "", http.StatusUnauthorized},
		{"a token the API server rejects", http.MethodGet, "/debug/status", "not-a-token", "", http.StatusUnauthorized},
		{"no role: read", http.MethodGet, "/debug/status", token, "", http.StatusForbidden},
		{"reader: read", http.MethodGet, "/debug/queue", token, "jsinformer-debug-reader", http.StatusOK},
		{"reader: action", http.MethodPost, "/debug/actions/resume", token, "", http.StatusForbidden},
		{"operator: action", http.MethodPost, "/debug/actions/resume", token, "jsinformer-debug-operator", http.StatusOK},
	}
	for _, tt := range tests { // in order: each binding adds to the ones before
		t.Run(tt.name, func(t *testing.T) {
			if tt.bind != "" {
				bindRole(t, client, roles[tt.bind], suffix, ns, sa)
			}
			// Bindings take effect, and the runner's decision cache (5s for a denial) expires.
			eventually(t, fmt.Sprintf("%s %s answers %d", tt.method, tt.path, tt.want), func() string {
				if got := tlsRequest(t, tt.method, base+tt.path, tt.token, `{"script":"throws.js"}`); got != tt.want {
					return fmt.Sprintf("answered %d", got)
				}
				return ""
			})
		})
	}
	t.Run("cli", func(t *testing.T) {
		out, err := execute(t, t.Context(), "queue", "--debug-addr", base, "--token", token, "--insecure-skip-tls-verify")
		if err != nil || !strings.Contains(out, "throws.js") {
			t.Fatalf("runner queue with a token: %v\n%s", err, out)
		}
		if _, err := execute(t, t.Context(), "queue", "--debug-addr", base, "--token", token); err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("runner queue without trusting the self-signed certificate: %v, want a certificate error", err)
		}
		if _, err := execute(t, t.Context(), "queue", "--debug-addr", base, "--insecure-skip-tls-verify"); err == nil || !strings.Contains(err.Error(), "HTTP 401") {
			t.Fatalf("runner queue without a token: %v, want 401", err)
		}
	})
}

// debugRoles reads the ClusterRoles of deploy/debug-rbac.yaml by name.
func debugRoles(t *testing.T) map[string]rbacv1.ClusterRole {
	t.Helper()
	data, err := os.ReadFile("../../deploy/debug-rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]rbacv1.ClusterRole{}
	for doc := range strings.SplitSeq(string(data), "\n---\n") {
		var role rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict([]byte(doc), &role); err != nil {
			var binding rbacv1.ClusterRoleBinding
			if yaml.UnmarshalStrict([]byte(doc), &binding) == nil {
				continue
			}
			t.Fatalf("debug-rbac.yaml: %v", err)
		}
		if role.Kind == "ClusterRole" {
			out[role.Name] = role
		}
	}
	if len(out) != 2 {
		t.Fatalf("debug-rbac.yaml has ClusterRoles %v, want the reader and the operator", out)
	}
	return out
}

// bindRole creates role (renamed with suffix) and binds it to the ServiceAccount.
func bindRole(t *testing.T, client kubernetes.Interface, role rbacv1.ClusterRole, suffix, ns, sa string) {
	t.Helper()
	role.Name += suffix
	role.ResourceVersion = ""
	if _, err := client.RbacV1().ClusterRoles().Create(t.Context(), &role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}},
	}
	if _, err := client.RbacV1().ClusterRoleBindings().Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// tlsRequest sends a request with a bearer token over TLS, trusting any certificate.
func tlsRequest(t *testing.T, method, url, token, body string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the runner's self-signed certificate
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}
