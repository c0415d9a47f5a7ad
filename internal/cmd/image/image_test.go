package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

const hostCACerts = "/etc/ssl/certs/ca-certificates.crt"

// buildRunner builds cmd/runner as `make image` does: static, trimmed, version set. Under
// `make test`, `make prebuild` has compiled the packages with the same flags, so this links.
func buildRunner(t *testing.T, dir, version string) string {
	t.Helper()
	out := filepath.Join(dir, "runner")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-trimpath", "-ldflags", "-s -w -X main.version="+version,
		"-o", out, "github.com/jsinformer/jsinformer/cmd/runner")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build the runner: %v\n%s", err, msg)
	}
	return out
}

// TestImage builds the image from a freshly built runner, then opens what was written the way
// a registry client would and checks it: config, files, and that the binary inside runs.
func TestImage(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the runner (a minute or two on a cold build cache)")
	}
	dir := t.TempDir()
	const version = "v9.8.7-test"
	o := options{binary: buildRunner(t, dir, version), layout: filepath.Join(dir, "image"), tarball: filepath.Join(dir, "image.tar"),
		tag: "jsinformer:test", caCerts: hostCACerts, version: version}
	if err := run(o); err != nil {
		t.Fatal(err)
	}
	img := openLayout(t, o.layout, "test")
	t.Run("config", func(t *testing.T) { checkConfig(t, img, version) })
	files := extract(t, img)
	t.Run("files", func(t *testing.T) { checkFiles(t, files) })
	t.Run("runner runs --version", func(t *testing.T) {
		bin := filepath.Join(t.TempDir(), "runner")
		if err := os.WriteFile(bin, files["runner"].body, 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := exec.CommandContext(t.Context(), bin, "--version").CombinedOutput()
		want := "runner version " + version + " (" + runtime.Version()
		if err != nil || !strings.HasPrefix(string(out), want) {
			t.Fatalf("runner --version from the image: %v, printed %q, want it to start with %q", err, out, want)
		}
	})
	t.Run("tarball holds the same image", func(t *testing.T) { checkTarball(t, o.tarball, "jsinformer:test", img) })
	t.Run("reproducible", func(t *testing.T) {
		// The uncompressed layer and the config decide the digest (gzip is deterministic);
		// comparing them spares compressing the binary again.
		again, err := rootfsLayer(o.binary, o.caCerts, created())
		if err != nil {
			t.Fatal(err)
		}
		layers, err := img.Layers()
		if err != nil {
			t.Fatal(err)
		}
		a, errA := layers[0].DiffID()
		b, errB := again.DiffID()
		if errA != nil || errB != nil || a != b {
			t.Fatalf("the same inputs built layers %s then %s (%v, %v)", a, b, errA, errB)
		}
	})
}

// openLayout returns the image named tag in the OCI layout at dir, which must hold only it.
func openLayout(t *testing.T, dir, tag string) v1.Image {
	t.Helper()
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("open layout: %v", err)
	}
	manifest, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(manifest.Manifests) != 1 || manifest.Manifests[0].Annotations[refNameAnnotation] != tag {
		t.Fatalf("layout index %+v: want one image named %q", manifest.Manifests, tag)
	}
	img, err := idx.Image(manifest.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func checkConfig(t *testing.T, img v1.Image, version string) {
	t.Helper()
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		what      string
		got, want any
	}{
		{"entrypoint", cfg.Config.Entrypoint, []string{"/runner"}},
		{"user", cfg.Config.User, "65532:65532"},
		{"os", cfg.OS, "linux"},
		{"architecture", cfg.Architecture, runtime.GOARCH},
		{"version label", cfg.Config.Labels["org.opencontainers.image.version"], version},
		{"created", cfg.Created.Unix(), int64(0)},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Errorf("image has %d layers (%v), want 1 on an empty base", len(layers), err)
	}
}

type file struct {
	hdr  *tar.Header
	body []byte
}

// extract reads the image's flattened filesystem.
func extract(t *testing.T, img v1.Image) map[string]file {
	t.Helper()
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	files := map[string]file{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimSuffix(hdr.Name, "/")] = file{hdr, body}
	}
}

func checkFiles(t *testing.T, files map[string]file) {
	t.Helper()
	ca, err := os.ReadFile(hostCACerts)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path     string
		mode     int64
		uid      int
		contains []byte
	}{
		{"runner", 0o755, 0, []byte("\x7fELF")},
		{"etc/ssl/certs/ca-certificates.crt", 0o644, 0, ca},
		{"etc/passwd", 0o644, 0, []byte("\nnonroot:x:65532:65532:nonroot:/home/nonroot:")},
		{"etc/group", 0o644, 0, []byte("\nnonroot:x:65532:\n")},
		{"home/nonroot", 0o700, 65532, nil},
		{"tmp", 0o1777, 0, nil},
	}
	for _, tt := range tests {
		f, ok := files[tt.path]
		switch {
		case !ok:
			t.Errorf("/%s missing", tt.path)
		case f.hdr.Mode != tt.mode || f.hdr.Uid != tt.uid:
			t.Errorf("/%s: mode %o uid %d, want %o uid %d", tt.path, f.hdr.Mode, f.hdr.Uid, tt.mode, tt.uid)
		case !bytes.Contains(f.body, tt.contains):
			t.Errorf("/%s lacks %.40q", tt.path, tt.contains)
		case !f.hdr.ModTime.Equal(time.Unix(0, 0)):
			t.Errorf("/%s modified %v, want the epoch (reproducible)", tt.path, f.hdr.ModTime)
		}
	}
}

// checkTarball opens the `docker save` tarball by its tag: it must hold the same config (and
// so the same layers) as the layout. Its manifest differs: the tarball format does not keep it.
func checkTarball(t *testing.T, path, tag string, want v1.Image) {
	t.Helper()
	ref, err := name.NewTag(tag)
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(path, &ref)
	if err != nil {
		t.Fatalf("open tarball as %s: %v", tag, err)
	}
	got, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	if w, _ := want.ConfigName(); got != w {
		t.Fatalf("tarball config %s, layout config %s", got, w)
	}
}

// TestRefusesUnfitBinaries: only a static Linux executable can run on the empty base.
func TestRefusesUnfitBinaries(t *testing.T) {
	t.Parallel()
	script := filepath.Join(t.TempDir(), "runner.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, binary, want string
	}{
		{"missing", filepath.Join(t.TempDir(), "nope"), "no such file"},
		{"not ELF", script, "build it with GOOS=linux"},
		{"dynamically linked", "/bin/true", "dynamically linked; build it with CGO_ENABLED=0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "image")
			err := run(options{binary: tt.binary, layout: out, tag: "jsinformer:test", caCerts: hostCACerts})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("run with %s: %v, want an error containing %q", tt.binary, err, tt.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("wrote %s despite the error", out)
			}
		})
	}
}

// TestKeepsOtherFolders: -out replaces an earlier image layout, never another folder.
func TestKeepsOtherFolders(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keep := filepath.Join(dir, "keep")
	if err := os.WriteFile(keep, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := writeLayout(dir, nil, name.MustParseReference("x:y").(name.Tag))
	if err == nil || !strings.Contains(err.Error(), "not an OCI layout") {
		t.Fatalf("writeLayout over a plain folder: %v, want a refusal", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("the folder's file is gone: %v", err)
	}
}
