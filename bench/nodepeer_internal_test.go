package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNodePeerLockfile keeps the Node.js peer reproducible: the client library is pinned to
// an exact version in package.json, and the lockfile names no download address (each package
// is fetched by name, version and integrity from whatever registry npm is configured with).
func TestNodePeerLockfile(t *testing.T) {
	t.Parallel()
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	readJSON(t, filepath.Join(nodeDir, "package.json"), &pkg)
	if v := pkg.Dependencies["@kubernetes/client-node"]; v == "" || strings.ContainsAny(v, "^~<>*x ") {
		t.Errorf("package.json: @kubernetes/client-node must be pinned to an exact version, got %q", v)
	}
	var lock struct {
		Packages map[string]struct {
			Version  string `json:"version"`
			Resolved string `json:"resolved"`
		} `json:"packages"`
	}
	readJSON(t, filepath.Join(nodeDir, "package-lock.json"), &lock)
	if got, want := lock.Packages["node_modules/@kubernetes/client-node"].Version, pkg.Dependencies["@kubernetes/client-node"]; got != want {
		t.Errorf("package-lock.json has @kubernetes/client-node %q, package.json %q: run npm install", got, want)
	}
	for name, p := range lock.Packages {
		if p.Resolved != "" {
			t.Errorf("package-lock.json: %s has a download address %q; strip the resolved fields", name, p.Resolved)
		}
	}
}

func readJSON(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
}
