package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

var env *controlplane.ControlPlane

func TestMain(m *testing.M) { controlplane.Exit(m, &env) }

// execute runs the command in-process and returns its error and log output.
func execute(t *testing.T, ctx context.Context, args ...string) (string, error) {
	t.Helper()
	cmd := newCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	return out.String(), err
}

// kubeconfigWith writes a kubeconfig for server and token.
func kubeconfigWith(t *testing.T, server, token string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	content := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"" + server + "\", insecure-skip-tls-verify: true}\n" +
		"users:\n- name: u\n  user: {token: \"" + token + "\"}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestClearErrors(t *testing.T) {
	cp := controlplane.Require(t, env)
	scripts := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no scripts flag", []string{"--kubeconfig", cp.Kubeconfig}, "--scripts is required"},
		{"scripts folder missing", []string{"--kubeconfig", cp.Kubeconfig, "--scripts", filepath.Join(scripts, "nope")}, "does not exist"},
		{"unreachable cluster", []string{"--kubeconfig", kubeconfigWith(t, "https://127.0.0.1:1", "x"), "--scripts", scripts}, "connect to cluster https://127.0.0.1:1"},
		{"bad credentials", []string{"--kubeconfig", kubeconfigWith(t, cp.Config.Host, "wrong"), "--scripts", scripts}, "rejected the credentials"},
		{"unknown resource", []string{"--kubeconfig", cp.Kubeconfig, "--scripts", scripts, "--gvr", "deploymnets"}, "did you mean apps/v1/deployments"},
		{"-A with -n", []string{"--kubeconfig", cp.Kubeconfig, "--scripts", scripts, "-A", "-n", "x"}, "cannot be used together"},
		{"bad log format", []string{"--scripts", scripts, "--log-format", "xml"}, "--log-format must be text or json"},
		{"zero backlog", []string{"--scripts", scripts, "--max-backlog", "0"}, "--max-backlog 0: want a positive number of events"},
		{"negative debounce", []string{"--scripts", scripts, "--debounce", "-1s"}, "--debounce must be positive, not -1s"},
		{"bad label selector", []string{"--scripts", scripts, "-l", "app in (a,b"}, `-l/--selector "app in (a,b" is not a valid label selector`},
		{"bad field selector", []string{"--scripts", scripts, "--field-selector", "name"}, `--field-selector "name" is not a valid field selector`},
		{"scripts folder missing, checked before connecting", []string{"--kubeconfig", kubeconfigWith(t, "https://127.0.0.1:1", "x"),
			"--scripts", filepath.Join(scripts, "nope")}, "the folder does not exist"},
		{"positional args", []string{"deploy"}, "unknown command"},
		{"renew deadline not below lease", []string{"--kubeconfig", cp.Kubeconfig, "--scripts", scripts, "--leader-elect", "--leader-elect-renew-deadline", "20s"}, "renew deadline (20s) < lease duration (15s)"},
		{"shard-cache without sharded", []string{"--kubeconfig", cp.Kubeconfig, "--scripts", scripts, "--shard-cache"}, "--shard-cache partitions the caches among --sharded replicas"},
		{"bad unhealthy-after", []string{"--scripts", scripts, "--unhealthy-after", "0s"}, "--unhealthy-after must be positive"},
		{"metrics port in use", []string{"--kubeconfig", cp.Kubeconfig, "--scripts", scripts, "--metrics-addr", busyAddr(t)}, "serve metrics on"},
		{"explicit debug port in use", []string{"--kubeconfig", cp.Kubeconfig, "--scripts", scripts, "--debug-addr", busyAddr(t)}, "serve debug API on"},
		{"negative trace records", []string{"--scripts", scripts, "--trace-records", "-1"}, "--trace-records must be 0 (off) or positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			_, err := execute(t, ctx, tt.args...)
			if err == nil {
				t.Fatal("runner succeeded, want an error")
			}
			if msg := err.Error(); !strings.Contains(msg, tt.want) || strings.Contains(msg, "\n") {
				t.Fatalf("error %q: want one line containing %q", msg, tt.want)
			}
		})
	}
}

// With no kubeconfig anywhere, the error says so and where it looked, not localhost:8080.
func TestNoKubeconfigFound(t *testing.T) {
	// Files listed in $KUBECONFIG that do not exist are skipped, as a missing ~/.kube/config
	// is; $HOME cannot stand in, client-go reads it once at start-up.
	missing := filepath.Join(t.TempDir(), "config")
	t.Setenv("KUBECONFIG", missing)
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	_, err := execute(t, t.Context(), "--scripts", t.TempDir())
	if err == nil {
		t.Fatal("runner succeeded without a kubeconfig")
	}
	msg := err.Error()
	for _, want := range []string{"no kubeconfig found", missing, "in-cluster"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "localhost:8080") {
		t.Errorf("error %q mentions client-go's fallback server", msg)
	}
}

func TestUsageLine(t *testing.T) {
	out, err := execute(t, t.Context(), "--help")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "runner [--gvr RESOURCE]... --scripts DIR [flags]") {
		t.Errorf("usage does not show --gvr as optional:\n%s", out)
	}
}

func TestHelpExplainsEveryFlag(t *testing.T) {
	out, err := execute(t, t.Context(), "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--gvr", "--scripts", "--kubeconfig", "--context", "--namespace", "--all-namespaces",
		"--selector", "--field-selector", "--resync", "--handler-timeout", "--log-format", "--dry-run", "--qps", "--burst",
		"--unhealthy-after", "--memory-limit", "--metric-series-limit", "--metric-collect-timeout", "--max-backlog", "--http2-read-idle-timeout", "--http2-ping-timeout", "--leader-elect", "--leader-elect-lease-duration", "--leader-elect-renew-deadline",
		"--leader-elect-retry-period", "--leader-elect-resource-name", "--leader-elect-resource-namespace",
		"--debug-addr", "--pprof", "--trace-records", "--permission-check-interval", "--webhook-addr", "--webhook-url", "--webhook-service", "--webhook-name", "--webhook-cert-dir", "--webhook-http2",
		"--allow-net", "--fetch-timeout", "--fetch-max-body", "--fetch-max-request-body", "--fetch-concurrency",
		"Examples:", "runner --gvr apps/v1/deployments --scripts"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

func TestServesReadinessAndMetricsThenStops(t *testing.T) {
	cp := controlplane.Require(t, env)
	scripts := t.TempDir()
	src := `export default { watch: "cm", onAdd(cm) {},
  metrics: { test_configmaps: { type: "gauge", help: "ConfigMaps", collect: (ctx) => [{ value: ctx.cache.list().length }] } } };`
	if err := os.WriteFile(filepath.Join(scripts, "a.js"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// An audit script, so that jsinformer_audit_results is served (its series are the results
	// of the audit of the ConfigMaps the test creates below).
	audit := `export default { watch: { resource: "v1/configmaps", namespace: "metrics-audit" },
  validate(cm) { return { allowed: false, message: "no" }; }, admission: { audit: true, mode: "audit" } };`
	if err := os.WriteFile(filepath.Join(scripts, "audit.js"), []byte(audit), 0o644); err != nil {
		t.Fatal(err)
	}
	kube := kubernetes.NewForConfigOrDie(cp.Config)
	if _, err := kube.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "metrics-audit"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "audited", Namespace: "metrics-audit"}}
	if _, err := kube.CoreV1().ConfigMaps("metrics-audit").Create(t.Context(), cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := execute(t, ctx, "--kubeconfig", cp.Kubeconfig, "--scripts", scripts, "--metrics-addr", addr)
		done <- err
	}()
	waitHTTP(t, "http://"+addr+"/readyz", "ok")
	waitHTTP(t, "http://"+addr+"/metrics", `jsinformer_script_loads_total{result="loaded",script="a.js"} 1`)
	waitHTTP(t, "http://"+addr+"/metrics", `jsinformer_queue_depth{script="a.js",version=`)
	waitHTTP(t, "http://"+addr+"/metrics", `jsinformer_informer_healthy{informer="v1/configmaps"} 1`)
	waitHTTP(t, "http://"+addr+"/metrics", "jsinformer_ready 1")
	waitHTTP(t, "http://"+addr+"/metrics", `jsinformer_audit_results{result="fail",script="audit.js"} 1`)
	waitHTTP(t, "http://"+addr+"/metrics", "\ntest_configmaps ") // a script's family, beside the runner's
	for _, name := range documentedMetrics(t) {                  // what the alerts and the dashboard rely on
		if afterAGuardStop[name] || strings.HasPrefix(name, "jsinformer_shard_") || strings.HasPrefix(name, "jsinformer_informer_shard_") { // --sharded (--shard-cache) only: TestShardedReplicas, TestShardCacheReplicas
			continue // TestMemoryGuardUnderALimit sees them
		}
		if strings.HasPrefix(name, "jsinformer_admission_") {
			continue // with --webhook-* only, after a decision: TestAdmissionDecisionsInViews sees them
		}
		waitHTTP(t, "http://"+addr+"/metrics", "\n"+name)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("runner returned %v after cancellation", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("runner did not stop within 30s of cancellation")
	}
}

// documentedMetrics are the names deploy/monitoring/metrics.txt lists; histograms are
// looked for as their _count series.
// afterAGuardStop are the documented metrics with no series before the memory guard measures
// or stops a script.
var afterAGuardStop = map[string]bool{"jsinformer_script_memory_bytes": true, "jsinformer_memory_guard_stops_total": true, "jsinformer_script_stopped": true}

func documentedMetrics(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../../deploy/monitoring/metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for line := range strings.Lines(string(data)) {
		fields := strings.Fields(line)
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if fields[1] == "histogram" {
			fields[0] += "_count"
		}
		names = append(names, fields[0])
	}
	if len(names) < 10 {
		t.Fatalf("metrics.txt lists %d metrics; unreadable?", len(names))
	}
	return names
}

// busyAddr is an address something already listens on, until the test ends.
func busyAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l.Addr().String()
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

// waitHTTP polls url until its body contains want.
func waitHTTP(t *testing.T, url, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url) //nolint:noctx // test poll
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Contains(string(body), want) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never answered 200 with %q (last error %v)", url, want, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
