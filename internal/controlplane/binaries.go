package controlplane

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// BinDirEnv overrides where the kube-apiserver and etcd binaries are looked up.
const BinDirEnv = "JSINFORMER_BIN_DIR"

// ErrBinariesMissing means `make controlplane` has not been run.
var ErrBinariesMissing = errors.New("control plane binaries not found: run `make controlplane` first")

// binaries locates kube-apiserver and etcd: $JSINFORMER_BIN_DIR, else the bin/ folder of the
// repository that contains the working directory.
func binaries() (apiserver, etcd string, err error) {
	dir := os.Getenv(BinDirEnv)
	if dir == "" {
		if dir, err = repoBinDir(); err != nil {
			return "", "", err
		}
	}
	apiserver, etcd = filepath.Join(dir, "kube-apiserver"), filepath.Join(dir, "etcd")
	for _, p := range []string{apiserver, etcd} {
		if _, err := exec.LookPath(p); err != nil {
			return "", "", fmt.Errorf("find %s: %w", p, ErrBinariesMissing)
		}
	}
	return apiserver, etcd, nil
}

// repoBinDir walks up from the working directory to the repository root (the first directory
// with a Makefile) and returns its bin/.
func repoBinDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("locate bin dir: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "Makefile")); err == nil {
			return filepath.Join(dir, "bin"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("locate bin dir: no Makefile above the working directory: %w", ErrBinariesMissing)
		}
		dir = parent
	}
}
