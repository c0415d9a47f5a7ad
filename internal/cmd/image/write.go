package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// refNameAnnotation names an image inside an OCI layout: `skopeo copy oci:DIR:TAG` finds the
// image by it.
const refNameAnnotation = "org.opencontainers.image.ref.name"

// writeLayout writes img as the only image of a fresh OCI layout in dir, named by ref's tag.
// An earlier layout there is replaced; any other existing folder is left alone, an error.
func writeLayout(dir string, img v1.Image, ref name.Tag) error {
	if err := clearLayout(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("write image layout %s: %w", dir, err)
	}
	annotations := map[string]string{refNameAnnotation: ref.TagStr()}
	if err := p.AppendImage(img, layout.WithAnnotations(annotations)); err != nil {
		return fmt.Errorf("write image to %s: %w", dir, err)
	}
	return nil
}

// clearLayout removes dir if it holds an OCI layout; it refuses to remove anything else.
func clearLayout(dir string) error {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, "oci-layout")); err != nil {
		return fmt.Errorf("write image layout %s: the folder exists and is not an OCI layout; not replacing it", dir)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("replace image layout %s: %w", dir, err)
	}
	return nil
}

// writeTarball writes img as a `docker save` tarball tagged ref.
func writeTarball(path string, img v1.Image, ref name.Tag) error {
	if err := tarball.WriteToFile(path, ref, img); err != nil {
		return fmt.Errorf("write image tarball %s: %w", path, err)
	}
	return nil
}
