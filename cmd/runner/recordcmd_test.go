package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/recording"
)

func TestRunnerRecordUsage(t *testing.T) {
	t.Parallel()
	_, err := execute(t, t.Context(), "record", "-o", filepath.Join(t.TempDir(), "x.jsonl"))
	var exit *exitError
	if !errors.As(err, &exit) || exit.code != 2 || !strings.Contains(err.Error(), "--gvr and -o are required") {
		t.Fatalf("err = %v, want a usage error", err)
	}
}

// runner record writes the cluster's initial list until stopped, and exits cleanly.
func TestRunnerRecordWritesTheInitialList(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	out := filepath.Join(t.TempDir(), "events.jsonl")
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := execute(t, ctx, "record", "--kubeconfig", cp.Kubeconfig, "--gvr", "namespaces", "-o", out)
		done <- err
	}()
	deadline := time.Now().Add(20 * time.Second)
	for !listed(out, "default", "kube-system") {
		if time.Now().After(deadline) {
			t.Fatal("the initial list was not recorded within 20s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("runner record: %v", err)
	}
	if !listed(out, "default", "kube-system") {
		t.Fatal("the recording lost its initial list when stopped")
	}
}

// listed reports whether the recording at path holds the namespaces in its initial list.
func listed(path string, namespaces ...string) bool {
	events, err := recording.ReadFile(path)
	if err != nil {
		return false
	}
	names := map[string]bool{}
	for _, ev := range events {
		if ev.Initial && ev.Resource == "v1/namespaces" {
			names[ev.Object["metadata"].(map[string]any)["name"].(string)] = true
		}
	}
	for _, n := range namespaces {
		if !names[n] {
			return false
		}
	}
	return true
}
