package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The small files of the root filesystem. Go's resolver and os/user read /etc/nsswitch.conf,
// /etc/passwd and /etc/group; "nonroot" is the user the image runs as.
const (
	passwd   = "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group    = "root:x:0:\nnonroot:x:65532:\n"
	nsswitch = "hosts: files dns\n"
)

// entry is one file or folder of the layer; body nil means a folder.
type entry struct {
	path     string
	mode     int64
	uid      int
	body     []byte
	fromFile string // read the body from this file instead
}

// rootfsLayer is the image's single layer: the binary at /runner, the CA bundle, the user
// database, a home folder for the user and a world-writable /tmp.
func rootfsLayer(binary, caCerts string, mtime time.Time) (v1.Layer, error) {
	entries := []entry{
		{path: "etc/", mode: 0o755},
		{path: "etc/group", mode: 0o644, body: []byte(group)},
		{path: "etc/nsswitch.conf", mode: 0o644, body: []byte(nsswitch)},
		{path: "etc/passwd", mode: 0o644, body: []byte(passwd)},
		{path: "etc/ssl/", mode: 0o755},
		{path: "etc/ssl/certs/", mode: 0o755},
		{path: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, fromFile: caCerts},
		{path: "home/", mode: 0o755},
		{path: "home/nonroot/", mode: 0o700, uid: uid},
		{path: "runner", mode: 0o755, fromFile: binary},
		{path: "tmp/", mode: 0o1777},
	}
	var buf bytes.Buffer
	if err := writeTar(&buf, entries, mtime); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
	if err != nil {
		return nil, fmt.Errorf("compress layer: %w", err)
	}
	return layer, nil
}

// writeTar writes entries in order with fixed times and numeric owners only, so the same
// inputs always give the same bytes.
func writeTar(w io.Writer, entries []entry, mtime time.Time) error {
	tw := tar.NewWriter(w)
	for _, e := range entries {
		if err := writeEntry(tw, e, mtime); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("write layer: %w", err)
	}
	return nil
}

func writeEntry(tw *tar.Writer, e entry, mtime time.Time) error {
	body := e.body
	if e.fromFile != "" {
		var err error
		if body, err = os.ReadFile(e.fromFile); err != nil {
			return fmt.Errorf("read %s for /%s: %w", e.fromFile, e.path, err)
		}
	}
	hdr := &tar.Header{Name: e.path, Mode: e.mode, Uid: e.uid, Gid: e.uid, ModTime: mtime, Format: tar.FormatPAX}
	if body == nil && e.fromFile == "" {
		hdr.Typeflag = tar.TypeDir
	} else {
		hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(body))
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("write layer header /%s: %w", e.path, err)
	}
	if _, err := tw.Write(body); err != nil {
		return fmt.Errorf("write layer file /%s: %w", e.path, err)
	}
	return nil
}
