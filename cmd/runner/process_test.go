package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// Runner processes for tests that need real ones: leader election (kill -9, SIGTERM, a cut
// connection) and the memory guard (the process's own heap).

// replica is one runner process and its JSON log.
type replica struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

type logLine struct {
	Time  time.Time `json:"time"`
	Msg   string    `json:"msg"`
	Attrs struct {
		Name string `json:"name"` // what the script logged
	} `json:"attrs"`
}

func (r *replica) lines(t *testing.T) []logLine {
	t.Helper()
	data, err := os.ReadFile(r.log)
	if err != nil {
		t.Fatal(err)
	}
	var out []logLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var l logLine
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg != "" {
			out = append(out, l)
		}
	}
	return out
}

// waitLog polls until the log has a line with msg (and name, if given) and returns it.
func (r *replica) waitLog(t *testing.T, msg, name string, within time.Duration) logLine {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		for _, l := range r.lines(t) {
			if l.Msg == msg && (name == "" || l.Attrs.Name == name) {
				return l
			}
		}
		if time.Now().After(deadline) {
			data, _ := os.ReadFile(r.log)
			t.Fatalf("%s never logged %q %s within %v:\n%s", r.name, msg, name, within, data)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// leaderEnv builds the runner once, in a test namespace of its own, and starts processes of it
// (replicas) against a kubeconfig.
type leaderEnv struct {
	bin, scripts, ns string
	dyn              dynamic.Interface
}

func newLeaderEnvNamed(t *testing.T, cp *controlplane.ControlPlane, ns string) *leaderEnv {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "runner")
	// Built as `make image` builds it (static, trimmed): `make prebuild` compiled those packages
	// before the tests, so this only links, and the image test shares the same compile.
	build := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the runner: %v\n%s", err, out)
	}
	le := &leaderEnv{bin: bin, scripts: filepath.Join(dir, "scripts"), ns: ns, dyn: dynamic.NewForConfigOrDie(cp.Config)}
	if err := os.Mkdir(le.scripts, 0o755); err != nil {
		t.Fatal(err)
	}
	le.create(t, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": le.ns}})
	return le
}

func (le *leaderEnv) create(t *testing.T, gvr schema.GroupVersionResource, obj map[string]any) {
	t.Helper()
	u := &unstructured.Unstructured{Object: obj}
	if _, err := le.dyn.Resource(gvr).Namespace(u.GetNamespace()).Create(t.Context(), u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (le *leaderEnv) configmap(t *testing.T, name string) {
	t.Helper()
	le.create(t, schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": le.ns}})
}

// startPlain runs a process with JSON logs, this env's scripts and args.
func (le *leaderEnv) startPlain(t *testing.T, name, kubeconfig string, extra ...string) *replica {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--kubeconfig", kubeconfig, "--scripts", le.scripts, "--log-format", "json"}, extra...)
	cmd := exec.Command(le.bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &replica{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		r.err = cmd.Wait()
		_ = logFile.Close()
		close(r.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-r.done
	})
	return r
}
