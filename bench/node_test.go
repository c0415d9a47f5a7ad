package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// nodeDir is the Node.js peer's package, relative to this package (go test's working dir).
const nodeDir = "node"

// nodeResult is what node/informer.mjs prints.
type nodeResult struct {
	SyncMs     float64 `json:"syncMs"`
	HeapMB     float64 `json:"heapMB"`
	ExternalMB float64 `json:"externalMB"`
	Adds       int     `json:"adds"`
}

// BenchmarkNodeInitialSync runs the @kubernetes/client-node informer (node/informer.mjs) on
// the seeded Deployments, alternating with the runner, and reports both and the runner/node
// ratios (time-ratio-vs-node, heap-ratio-vs-node). The Node figures are measured inside the
// node process (its start-up is excluded, as the Go process's is for the runner); its heap
// is V8's heapUsed plus external memory, both above the baseline.
func BenchmarkNodeInitialSync(b *testing.B) {
	installNodePeer(b) // before seeding, so a missing node fails fast
	cp := seeded(b)
	results := runRounds(b, cp, []contender{{"runner", runnerSync}, {"node", nodeSync}})
	reportRatios(b, "-vs-node", results[0], results[1])
}

// installNodePeer checks for node and npm and runs `npm ci` when node_modules is missing.
func installNodePeer(b *testing.B) {
	b.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Fatalf("BenchmarkNodeInitialSync needs Node.js 20+ and npm on PATH: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(nodeDir, "node_modules")); err == nil {
		return
	} else if !errors.Is(err, os.ErrNotExist) {
		b.Fatalf("check node_modules: %v", err)
	}
	cmd := exec.CommandContext(b.Context(), "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = nodeDir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("npm ci in bench/%s: %v\n%s", nodeDir, err, out)
	}
}

// nodeSync runs informer.mjs once against the control plane.
func nodeSync(b *testing.B, cp *controlplane.ControlPlane) sample {
	b.Helper()
	ctx, cancel := context.WithTimeout(b.Context(), readyTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "--expose-gc", "informer.mjs", cp.Kubeconfig, benchNamespace)
	cmd.Dir = nodeDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("node informer.mjs: %v\n%s", err, stderr.String())
	}
	res, err := parseNodeResult(stdout.Bytes())
	if err != nil {
		b.Fatalf("%v\nstderr:\n%s", err, stderr.String())
	}
	return sample{
		elapsed: time.Duration(res.SyncMs * float64(time.Millisecond)),
		heap:    int64((res.HeapMB + res.ExternalMB) * (1 << 20)),
	}
}

func parseNodeResult(out []byte) (nodeResult, error) {
	var res nodeResult
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	if err := json.Unmarshal(lines[len(lines)-1], &res); err != nil {
		return res, fmt.Errorf("parse informer.mjs output %q: %w", out, err)
	}
	if res.Adds != seedCount {
		return res, fmt.Errorf("informer.mjs handled %d adds, want %d", res.Adds, seedCount)
	}
	return res, nil
}
