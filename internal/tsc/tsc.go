package tsc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// Version is the pinned compiler.
const Version = "5.9.3"

// Install returns the path of the pinned tsc, installed from the npm registry once into the
// repository's bin/npm (shared by later runs) through a temporary folder renamed into place,
// so concurrent runs never see half an install.
func Install(t testing.TB) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("checking TypeScript needs Node.js and npm on PATH: %v", err)
		}
	}
	_, file, _, _ := runtime.Caller(0)
	cache := filepath.Join(filepath.Dir(file), "..", "..", "bin", "npm", "typescript-"+Version)
	tsc := filepath.Join(cache, "node_modules", "typescript", "bin", "tsc")
	if _, err := os.Stat(tsc); err == nil {
		return tsc
	}
	if err := os.MkdirAll(filepath.Dir(cache), 0o755); err != nil {
		t.Fatal(err)
	}
	staging, err := os.MkdirTemp(filepath.Dir(cache), ".install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(staging)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-save", "--ignore-scripts", "--no-audit", "--no-fund",
		"--prefix", staging, "typescript@"+Version)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install typescript@%s: %v\n%s", Version, err, out)
	}
	if err := os.Rename(staging, cache); err != nil && !errors.Is(err, os.ErrExist) {
		if _, statErr := os.Stat(tsc); statErr != nil { // not another run's install either
			t.Fatalf("install typescript into %s: %v", cache, err)
		}
	}
	return tsc
}

// Check runs tsc --noEmit over dir, which holds a tsconfig.json, and returns its output.
func Check(t testing.TB, tsc, dir string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", tsc, "--noEmit", "--pretty", "false", "-p", dir)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}
