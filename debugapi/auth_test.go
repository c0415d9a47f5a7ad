package debugapi_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/debugapi"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// A runner whose identity lacks system:auth-delegator cannot ask about its callers: every
// caller is told what the runner misses (not to send another token), and the runner says it
// once at WARN.
func TestAuthWithoutAuthDelegator(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	admin, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "authdelegator-"}}
	if ns, err = admin.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	token := func(name string) string {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := admin.CoreV1().ServiceAccounts(ns.Name).Create(t.Context(), sa, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		tr, err := admin.CoreV1().ServiceAccounts(ns.Name).CreateToken(t.Context(), name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	runnerCfg := rest.AnonymousClientConfig(cp.Config)
	runnerCfg.BearerToken = token("runner") // no role at all
	runner, err := kubernetes.NewForConfig(runnerCfg)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	auth, err := debugapi.NewDelegatingAuthorizer(runner, slog.New(slog.NewTextHandler(&syncWriter{w: &log}, nil)))
	if err != nil {
		t.Fatal(err)
	}
	caller := token("caller")
	for range 3 {
		w := httptest.NewRecorder()
		r := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/debug/status", nil)
		r.Header.Set("Authorization", "Bearer "+caller)
		if auth.Allow(w, r) {
			t.Fatal("a runner that cannot review tokens allowed a request")
		}
		body := w.Body.String()
		if w.Code != http.StatusServiceUnavailable || !strings.Contains(body, "may not create tokenreviews") ||
			!strings.Contains(body, "system:auth-delegator") {
			t.Fatalf("answered %d %s; want 503 naming tokenreviews and system:auth-delegator", w.Code, body)
		}
	}
	warns := strings.Count(log.String(), "level=WARN")
	if warns != 1 || !strings.Contains(log.String(), "missing=\"create tokenreviews\"") {
		t.Fatalf("%d WARN lines, want one naming the missing permission:\n%s", warns, log.String())
	}
}
