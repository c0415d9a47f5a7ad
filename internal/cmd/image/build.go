package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's fixed layout: where the binary goes and who runs it. The uid is distroless's
// "nonroot", which deploy/deployment.yaml's runAsUser matches.
const (
	entrypoint = "/runner"
	uid        = 65532
	user       = "65532:65532"
)

// options are the command's flags.
type options struct {
	binary, layout, tarball, tag, caCerts, version string
}

func run(o options) error {
	if o.binary == "" || o.layout == "" {
		return errors.New("-binary and -out are required")
	}
	ref, err := name.NewTag(o.tag)
	if err != nil {
		return fmt.Errorf("parse -tag: %w", err)
	}
	img, err := build(o, created())
	if err != nil {
		return err
	}
	if err := writeLayout(o.layout, img, ref); err != nil {
		return err
	}
	if o.tarball != "" {
		return writeTarball(o.tarball, img, ref)
	}
	return nil
}

// build assembles the image from the binary and the CA bundle.
func build(o options, created time.Time) (v1.Image, error) {
	arch, err := staticLinuxArch(o.binary)
	if err != nil {
		return nil, err
	}
	layer, err := rootfsLayer(o.binary, o.caCerts, created)
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.ConfigFile(img, configFile(arch, o.version, created))
	if err != nil {
		return nil, fmt.Errorf("set image config: %w", err)
	}
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: created}, CreatedBy: "jsinformer internal/cmd/image", Comment: "runner, CA certificates, nonroot user"},
	})
	if err != nil {
		return nil, fmt.Errorf("add layer: %w", err)
	}
	return img, nil
}

func configFile(arch, version string, created time.Time) *v1.ConfigFile {
	labels := map[string]string{
		"org.opencontainers.image.title":       "jsinformer",
		"org.opencontainers.image.description": "Runs JavaScript plugins as event handlers for Kubernetes resources",
	}
	if version != "" {
		labels["org.opencontainers.image.version"] = version
	}
	return &v1.ConfigFile{
		Architecture: arch,
		OS:           "linux",
		Created:      v1.Time{Time: created},
		Config: v1.Config{
			Entrypoint: []string{entrypoint},
			User:       user,
			WorkingDir: "/home/nonroot",
			Env:        []string{"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"},
			Labels:     labels,
		},
		RootFS: v1.RootFS{Type: "layers"},
	}
}

// created is $SOURCE_DATE_EPOCH when set (reproducible-builds.org), else the Unix epoch: never
// the wall clock, so the digest depends on the content only.
func created() time.Time {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if secs, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(secs, 0).UTC()
		}
	}
	return time.Unix(0, 0).UTC()
}
