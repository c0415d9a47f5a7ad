package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// freePort is a loopback port nothing listens on (now).
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// admissionRunner is the runner's engine and webhooks, wired as run wires them.
type admissionRunner struct {
	stop   func()
	engine *engine.Engine
	ca     func() []byte // the CA bundle the webhook server's certificate chains to
}

func startAdmissionRunner(t *testing.T, cfg *rest.Config, dir, name, addr string) *admissionRunner {
	t.Helper()
	return startAdmissionReplica(t, cfg, dir, name, addr, "https://"+addr, 0)
}

// startAdmissionReplica is startAdmissionRunner serving on addr and registering url, its
// registrar reconciling every resync (0: the default).
func startAdmissionReplica(t *testing.T, cfg *rest.Config, dir, name, addr, url string, resync time.Duration) *admissionRunner {
	t.Helper()
	return startAdmissionWith(t, cfg, dir, webhookFlags{addr: addr, url: url, name: name}, resync)
}

// startAdmissionWith is startAdmissionReplica with the runner's --webhook-* flags.
func startAdmissionWith(t *testing.T, cfg *rest.Config, dir string, flags webhookFlags, resync time.Duration) *admissionRunner {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	hooks, parts, err := flags.newWebhooks(t.Context(), cfg, false, logger)
	if err != nil {
		t.Fatal(err)
	}
	if resync > 0 && hooks.registrar != nil {
		hooks.registrar.Resync = resync
	}
	e, err := engine.New(engine.Config{RESTConfig: cfg, ScriptsDir: dir, Logger: logger, HandlerTimeout: 2 * time.Second,
		Debounce: 20 * time.Millisecond, OnAdmission: hooks.changed, OnReady: hooks.ready})
	if err != nil {
		t.Fatal(err)
	}
	hooks.start(e, parts, logger, nil)
	parent, cancel := context.WithCancel(context.Background())
	ctx, release := hooks.engineContext(parent)
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	r := &admissionRunner{engine: e, ca: hooks.certs.CABundle}
	r.stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("engine Run: %v", err)
		}
		release()
		hooks.stop()
		r.stop = func() {}
	}
	t.Cleanup(func() { r.stop() })
	return r
}

func policyScript(ns, body, admission string) string {
	return fmt.Sprintf(`export default {
  watch: { resource: "v1/configmaps", namespace: %q },
  validate(obj, ctx) {
%s
  },
  admission: %s,
};
`, ns, body, admission)
}

// TestRunnerServesAndRegistersAdmission runs the runner's engine and webhooks against
// kube-apiserver, which calls them on loopback: a policy takes effect, a reload changes the
// answer, a throwing script answers by its failurePolicy, a removed policy's entry goes, and
// with the runner stopped a Fail policy refuses the requests it matches.
func TestRunnerServesAndRegistersAdmission(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	client := kubernetes.NewForConfigOrDie(cp.Config)
	ns, name := "adm-e2e", "jsinformer-e2e"
	admissionNamespace(t, client, ns, name)
	dir := t.TempDir()
	write := func(src string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "policy.js"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(policyScript(ns, `    return { allowed: false, message: "v1 says no" };`, `{ failurePolicy: "Fail", timeoutSeconds: 5 }`))
	r := startAdmissionRunner(t, cp.Config, dir, name, freePort(t))

	seen := &warnings{}
	cfg := rest.CopyConfig(cp.Config)
	cfg.WarningHandler = seen
	cms := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(ns)
	n := 0
	create := func() error {
		n++
		_, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("cm-", n)}}, metav1.CreateOptions{})
		return err
	}
	eventually := func(what string, ok func(error) bool) time.Duration {
		t.Helper()
		start := time.Now()
		var err error
		for deadline := start.Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if err = create(); ok(err) {
				return time.Since(start)
			}
		}
		t.Fatalf("%s: not within 30s; last create: %v", what, err)
		return 0
	}
	deniedWith := func(msg string) func(error) bool {
		return func(err error) bool { return apierrors.IsForbidden(err) && strings.Contains(err.Error(), msg) }
	}
	eventually("v1 denies", deniedWith("v1 says no"))

	write(policyScript(ns, `    return { allowed: false, message: "v2 says no" };`, `{ failurePolicy: "Fail", timeoutSeconds: 5 }`))
	took := eventually("the reload's answer", deniedWith("v2 says no"))
	t.Logf("a reload changed the answer within %s", took)

	write(policyScript(ns, `    throw new Error("broken policy");`, `{ failurePolicy: "Ignore", timeoutSeconds: 5 }`))
	eventually("a throw with Ignore allows", func(err error) bool { return err == nil })
	if !strings.Contains(strings.Join(seen.list(), "|"), "policy.js validate failed: policy.js:") {
		t.Errorf("warnings seen: %q, want the script's error with its file:line", seen.list())
	}
	write(policyScript(ns, `    throw new Error("broken policy");`, `{ failurePolicy: "Fail", timeoutSeconds: 5 }`))
	eventually("a throw with Fail denies", func(err error) bool {
		return err != nil && strings.Contains(err.Error(), "policy.js validate failed: policy.js:") && strings.Contains(err.Error(), "broken policy")
	})

	if err := os.Remove(filepath.Join(dir, "policy.js")); err != nil {
		t.Fatal(err)
	}
	eventually("the removed policy's entry goes", func(err error) bool { return err == nil })
	if _, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("with no policy left the configuration remains: %v", err)
	}

	write(policyScript(ns, `    return;`, `{ failurePolicy: "Fail", timeoutSeconds: 2 }`))
	eventually("the allowing policy is registered", func(err error) bool {
		_, gerr := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), name, metav1.GetOptions{})
		return err == nil && gerr == nil
	})
	r.stop()
	if err := create(); err == nil || !strings.Contains(err.Error(), "failed calling webhook") {
		t.Errorf("with the runner stopped, a Fail policy's create: %v, want refused", err)
	}

	// Another runner (it adopts the Secret's CA) registers an Ignore policy, then stops: the
	// API server lets the requests through.
	write(policyScript(ns, `    return;`, `{ failurePolicy: "Ignore", timeoutSeconds: 2 }`))
	r = startAdmissionRunner(t, cp.Config, dir, name, freePort(t))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		vwc, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), name, metav1.GetOptions{})
		if err == nil && len(vwc.Webhooks) == 1 && string(*vwc.Webhooks[0].FailurePolicy) == "Ignore" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Ignore policy was not registered within 30s: %v", err)
		}
	}
	r.stop()
	// The API server may still hold the Fail entry a moment: poll (Fail never allows).
	eventually("with the runner stopped, an Ignore policy allows", func(err error) bool { return err == nil })
}

// warnings collects the warnings the API server sends the client.
type warnings struct {
	mu  sync.Mutex
	got []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, text)
}

func (w *warnings) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.got...)
}
