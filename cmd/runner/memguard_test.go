package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// guardLimit is small enough for the leak to reach quickly, large enough for the runner's own
// ~30 MB of heap (informers, goja, esbuild) to stay well below half of it.
const guardLimit = 200 << 20

// A script that keeps growing a module-level array, next to a healthy script, in a runner
// process of its own under --memory-limit: the guard stops the leaking script, the process
// survives with its peak RSS bounded, and the healthy script keeps handling events. The
// process is real so that the guard reads the real heap.
func TestMemoryGuardUnderALimit(t *testing.T) {
	cp := controlplane.Require(t, env)
	ns := fmt.Sprintf("memguard-%d", time.Now().UnixNano())
	le := newLeaderEnvNamed(t, cp, ns)
	writeScript(t, le.scripts, "leak.js", `const kept = [];
export default {
  watch: { resource: "v1/configmaps", namespace: "`+ns+`" },
  schedule: [{ every: "1s", run() { for (let i = 0; i < 12; i++) kept.push("x".repeat(1 << 20) + kept.length); } }],
};`)
	writeScript(t, le.scripts, "healthy.js", `export default { watch: { resource: "v1/configmaps", namespace: "`+ns+`" },
  onAdd(cm) { log.info("handled", { name: cm.metadata.name }); } };`)
	addr := freeAddr(t)
	r := le.startPlain(t, "guarded", cp.Kubeconfig, "--memory-limit", strconv.Itoa(guardLimit), "--metrics-addr", addr)

	metrics := "http://" + addr + "/metrics"
	start := time.Now()
	waitMetric(t, r, metrics, `jsinformer_memory_guard_stops_total{script="leak.js"} 1`, 90*time.Second)
	t.Logf("leak.js stopped %v after the runner started", time.Since(start).Round(100*time.Millisecond))
	le.configmap(t, "after-stop")
	r.waitLog(t, "handled", "after-stop", 30*time.Second)
	waitMetric(t, r, metrics, `jsinformer_script_stopped{script="leak.js"} 1`, time.Second)
	if body := scrape(t, metrics); strings.Contains(body, `jsinformer_memory_guard_stops_total{script="healthy.js"}`) {
		t.Errorf("the healthy script was stopped too")
	}
	peak := peakRSS(t, r.cmd.Process.Pid)
	t.Logf("peak RSS %d MiB under a %d MiB limit", peak>>20, guardLimit>>20)
	if peak > guardLimit*3/2 {
		t.Errorf("peak RSS %d MiB, want at most 1.5 times the %d MiB limit", peak>>20, guardLimit>>20)
	}
}

// waitMetric polls url until its body has want, failing early if the runner exits.
func waitMetric(t *testing.T, r *replica, url, want string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !strings.Contains(scrape(t, url), want) {
		select {
		case <-r.done:
			t.Fatalf("the runner exited (%v) before %s", r.err, want)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v", want, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url) //nolint:noctx // test poll
	if err != nil {
		return ""
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

// peakRSS is the process's high-water resident set (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}
