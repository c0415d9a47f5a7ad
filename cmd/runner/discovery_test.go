package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/status"
)

// Two runners on one machine: runner list finds both (each on its own free port, as a second
// runner on the default address would be), runner status says which one answered, and a
// stopped runner's record is gone.
func TestRunnerDiscovery(t *testing.T) {
	// Not parallel: t.Setenv, and runners in one process share klog's global logger.
	cp := controlplane.Require(t, env)
	t.Setenv("JSINFORMER_RUNTIME_DIR", t.TempDir())
	// A record of a process that is gone (killed before removing it) is not listed.
	stale, _ := json.Marshal(status.RunnerInfo{PID: 1 << 30, DebugAddr: "127.0.0.1:1"})
	if err := os.WriteFile(filepath.Join(runtimeDir(), "stale.json"), stale, 0o600); err != nil {
		t.Fatal(err)
	}
	scriptsA, scriptsB := t.TempDir(), t.TempDir()
	addrA := freeAddr(t)
	outA, stopA := startRunner(t, "--kubeconfig", cp.Kubeconfig, "--scripts", scriptsA, "--debug-addr", addrA)
	waitOutput(t, outA, "msg=ready")
	outB, stopB := startRunner(t, "--kubeconfig", cp.Kubeconfig, "--scripts", scriptsB, "--debug-addr", freeAddr(t))
	waitOutput(t, outB, "msg=ready")

	var runners []status.RunnerInfo
	out, err := execute(t, t.Context(), "list", "-o", "json")
	if err != nil || json.Unmarshal([]byte(out), &runners) != nil {
		t.Fatalf("runner list -o json: %v\n%s", err, out)
	}
	if len(runners) != 2 {
		t.Fatalf("runner list found %d runners, want 2: %+v", len(runners), runners)
	}
	var b status.RunnerInfo
	for _, r := range runners {
		if r.ScriptsDir == scriptsB {
			b = r
		}
	}
	if b.DebugAddr == "" || b.PID != os.Getpid() {
		t.Fatalf("runner list lacks the second runner (scripts %s): %+v", scriptsB, runners)
	}
	// runner status on B's address names B's scripts folder, and A's names A's.
	for addr, scripts := range map[string]string{b.DebugAddr: scriptsB, addrA: scriptsA} {
		out, err := execute(t, t.Context(), "status", "--debug-addr", addr)
		want := fmt.Sprintf("Runner: pid %d on ", os.Getpid())
		if err != nil || !strings.Contains(out, want) || !strings.Contains(out, "scripts "+scripts) {
			t.Fatalf("runner status --debug-addr %s: %v; want %q and scripts %s in:\n%s", addr, err, want, scripts, out)
		}
	}
	stopB()
	out, err = execute(t, t.Context(), "list")
	if err != nil || strings.Contains(out, scriptsB) || !strings.Contains(out, scriptsA) {
		t.Fatalf("runner list after the second runner stopped: %v\n%s", err, out)
	}
	stopA()
	entries, _ := os.ReadDir(runtimeDir())
	if len(entries) != 0 {
		t.Fatalf("records left after both runners stopped: %v", entries)
	}
}
