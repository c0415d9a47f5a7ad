package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// readyTimeout bounds an engine's start-up or an informer's initial sync; far above any
// expected figure, it only turns a hang into a failure.
const readyTimeout = 5 * time.Minute

// runner is an engine running in the benchmark process.
type runner struct {
	engine *engine.Engine
	tap    *logTap
	ready  chan struct{}
	cancel context.CancelFunc
	done   chan error
}

// newRunner builds an engine on the scripts in dir with the default debounce; it does not
// contact the cluster until start.
func newRunner(b *testing.B, cp *controlplane.ControlPlane, dir string) *runner {
	b.Helper()
	r := &runner{tap: newLogTap(), ready: make(chan struct{}), done: make(chan error, 1)}
	e, err := engine.New(engine.Config{
		RESTConfig: cp.Config, ScriptsDir: dir, Logger: slog.New(r.tap), PaceGC: true,
		OnReady: func() { close(r.ready) },
	})
	if err != nil {
		b.Fatalf("new engine: %v", err)
	}
	r.engine = e
	return r
}

func (r *runner) start() {
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- r.engine.Run(ctx) }()
}

// waitReady blocks until OnReady: every initial script loaded and its adds handled.
func (r *runner) waitReady(b *testing.B) {
	b.Helper()
	select {
	case <-r.ready:
	case err := <-r.done:
		b.Fatalf("engine stopped before ready: %v\n%s", err, r.tap.problems())
	case <-time.After(readyTimeout):
		b.Fatalf("engine not ready within %s\n%s", readyTimeout, r.tap.problems())
	}
}

// stop cancels Run and waits for it: every informer and script version is gone afterwards.
func (r *runner) stop(b *testing.B) {
	b.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil {
			b.Fatalf("engine Run: %v", err)
		}
	case <-time.After(time.Minute):
		b.Fatal("engine did not stop within a minute")
	}
}

func writeScript(b *testing.B, dir, name, content string) {
	b.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		b.Fatalf("write script: %v", err)
	}
}

// scriptVersion is how the engine names a content in its logs (plugins.Source.Hash).
func scriptVersion(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])[:12]
}

// waitClosed waits for each channel in turn, all within one deadline.
func waitClosed(timeout time.Duration, chans ...<-chan struct{}) error {
	deadline := time.After(timeout)
	for i, ch := range chans {
		select {
		case <-ch:
		case <-deadline:
			return fmt.Errorf("wait for sync: timed out after %s at step %d of %d", timeout, i+1, len(chans))
		}
	}
	return nil
}
