package controlplane_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The control plane (hack/controlplane's go.mod) and the runner are built with the same flags
// (static, trimmed: hack/controlplane/build.sh and `make prebuild`), so Go's build cache
// compiles a package they share once, but only when both builds use the same version of its
// module. On a fresh machine that is most of the runner's dependencies, minutes of CPU: this
// test fails when an upgrade on one side leaves the other behind.
func TestControlPlaneSharesDependencyVersions(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	runner := buildModules(t, root, "./...")
	cp := buildModules(t, filepath.Join(root, "hack", "controlplane"),
		"k8s.io/kubernetes/cmd/kube-apiserver", "./cmd/etcd")
	shared := 0
	var differ []string
	for path, v := range runner {
		w, ok := cp[path]
		if !ok {
			continue
		}
		shared++
		if v != w {
			differ = append(differ, path+": runner "+v+", control plane "+w)
		}
	}
	sort.Strings(differ)
	if len(differ) > 0 {
		t.Errorf("%d of %d modules both builds compile differ in version, so their packages are "+
			"compiled twice; `go get` the higher version in the other go.mod (root or "+
			"hack/controlplane) and `go mod tidy`:\n%s", len(differ), shared, strings.Join(differ, "\n"))
	}
	if shared < 50 {
		t.Errorf("only %d modules shared: the package lists were not read as expected", shared)
	}
}

// buildModules returns the module path → version of every package a static build of pkgs in
// dir compiles (replacements resolved).
func buildModules(t *testing.T, dir string, pkgs ...string) map[string]string {
	t.Helper()
	args := append([]string{"list", "-deps", "-f",
		"{{with .Module}}{{.Path}} {{with .Replace}}{{.Version}}{{else}}{{.Version}}{{end}}{{end}}"}, pkgs...)
	cmd := exec.CommandContext(t.Context(), "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list in %s: %v\n%s", dir, err, stderr.String())
	}
	mods := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		path, version, ok := strings.Cut(sc.Text(), " ")
		if ok && version != "" { // the main module has no version
			mods[path] = version
		}
	}
	return mods
}

// repoRoot is the directory above the working directory that holds the Makefile.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "Makefile")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no Makefile above the working directory")
		}
		dir = parent
	}
}
