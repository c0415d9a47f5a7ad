package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// syncBuffer is the runner's log output, read by the test while the runner writes it.
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

// runUntil runs the runner with args until its output contains want and it is ready, then
// stops it and returns the output. (Stopping it before it is ready hits the engine's
// shutdown-during-sync race, issue 11 section 2.)
func runUntil(t *testing.T, want string, args ...string) string {
	t.Helper()
	cmd := newCommand()
	out := &syncBuffer{}
	cmd.SetOut(out)
	cmd.SetErr(out)
	cmd.SetArgs(args)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "ready") {
		if time.Now().After(deadline) {
			cancel()
			err := <-done
			t.Fatalf("output never contained %q (runner returned %v):\n%s", want, err, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("runner: %v\n%s", err, out.String())
	}
	return out.String()
}

func writeScript(t *testing.T, dir, name, src string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A script's log fields cannot forge or duplicate the attributes the runner writes.
func TestScriptCannotForgeLogAttributes(t *testing.T) {
	cp := controlplane.Require(t, env)
	scripts := t.TempDir()
	writeScript(t, scripts, "forge.js", `log.info("hello", { level: "ERROR", script: "other.js", msg: "spoofed",
  time: "then", version: "v0", source: "x.go:1", handler: "onAdd", attrs: "nested", n: 1 });
export default { watch: "cm", onAdd() {} };`)
	out := runUntil(t, "spoofed", "--kubeconfig", cp.Kubeconfig, "--scripts", scripts, "--log-format", "json")
	var line string
	for l := range strings.SplitSeq(out, "\n") {
		if strings.Contains(l, "spoofed") {
			line = l
		}
	}
	keys := topLevelKeys(t, line)
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			t.Errorf("key %q appears twice in %s", k, line)
		}
		seen[k] = true
	}
	var rec struct {
		Level, Msg, Script, Version string
		Handler                     *string
		Attrs                       map[string]any
	}
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Level != "INFO" || rec.Msg != "hello" || rec.Script != "forge.js" || rec.Version == "v0" || rec.Handler != nil {
		t.Errorf("the runner's attributes were forged: %s", line)
	}
	if rec.Attrs["level"] != "ERROR" || rec.Attrs["script"] != "other.js" || rec.Attrs["n"] != 1.0 {
		t.Errorf("the script's fields are not under attrs: %s", line)
	}
}

// topLevelKeys lists the keys of a JSON object in order, duplicates included.
func topLevelKeys(t *testing.T, line string) []string {
	t.Helper()
	dec := json.NewDecoder(bufio.NewReader(strings.NewReader(line)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %q", line)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}
