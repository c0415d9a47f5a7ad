package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

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
	out, stop := startRunner(t, args...)
	waitOutput(t, out, want)
	waitOutput(t, out, "ready")
	stop()
	return out.String()
}

// startRunner runs the runner in-process; stop cancels it and waits for it to return nil.
func startRunner(t *testing.T, args ...string) (out *syncBuffer, stop func()) {
	t.Helper()
	cmd := newCommand()
	out = &syncBuffer{}
	cmd.SetOut(out)
	cmd.SetErr(out)
	cmd.SetArgs(args)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("runner: %v\n%s", err, out.String())
			}
		})
	}
	t.Cleanup(stop)
	return out, stop
}

// waitOutput polls until out contains want.
func waitOutput(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("output never contained %q:\n%s", want, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
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

// The API server echoes a rejected value in its error message; about a Secret, that value is
// the Secret's data, and it must reach neither the log nor the script. Dry-run records of
// writes to Secrets do not show their data either.
func TestSecretValuesNeverReachTheLog(t *testing.T) {
	cp := controlplane.Require(t, env)
	const secret = "hunter2-TOPSECRET"
	ns := fmt.Sprintf("secret-log-%d", time.Now().UnixNano()) // unique: the test may run with -count
	dyn := dynamic.NewForConfigOrDie(cp.Config)
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": ns}}}
	if _, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).
		Create(t.Context(), nsObj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	scripts := t.TempDir()
	writeScript(t, scripts, "leak.js", `const bad = (name) => ({ apiVersion: "v1", kind: "Secret",
  metadata: { name, namespace: "`+ns+`" }, stringData: { password: { v: "`+secret+`" } } });
export default {
  watch: { resource: "configmaps", namespace: "`+ns+`" },
  onAdd(cm) {
    if (cm.metadata.name === "caught") {
      try { k8s.patch("secrets", "`+ns+`", "s1", bad("s1"), { type: "apply", force: true }) }
      catch (e) { log.info("caught", { code: e.code, reason: e.reason, message: e.message }) }
    }
    if (cm.metadata.name === "uncaught") k8s.create("secrets", bad("s2"));
    if (cm.metadata.name === "dry") {
      k8s.create("secrets", { apiVersion: "v1", kind: "Secret", metadata: { name: "s3", namespace: "`+ns+`" },
        stringData: { password: "`+secret+`" } });
      k8s.patch("secrets", "`+ns+`", "s4", { apiVersion: "v1", kind: "Secret", metadata: { name: "s4" },
        stringData: { password: "`+secret+`" } }, { type: "apply" });
      log.info("dry done");
    }
  },
};`)
	for _, dryRun := range []bool{false, true} {
		args := []string{"--kubeconfig", cp.Kubeconfig, "--scripts", scripts}
		names := []string{"caught", "uncaught"}
		if dryRun {
			args, names = append(args, "--dry-run"), []string{"dry"}
		}
		out, stop := startRunner(t, args...)
		waitOutput(t, out, "ready")
		for _, name := range names {
			cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": name, "namespace": ns}}}
			cms := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
			_ = cms.Delete(t.Context(), name, metav1.DeleteOptions{})
			if _, err := cms.Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if dryRun {
			waitOutput(t, out, "dry done")
			waitOutput(t, out, "dry-run: would write")
		} else {
			waitOutput(t, out, "msg=caught")
			waitOutput(t, out, "script handler failed")
			if !strings.Contains(out.String(), "attrs.code=500") {
				t.Errorf("the caught error lost its code and reason:\n%s", out.String())
			}
		}
		stop()
		if strings.Contains(out.String(), "hunter2") {
			t.Errorf("dry-run=%t: a Secret value reached the log:\n%s", dryRun, out.String())
		}
	}
}
