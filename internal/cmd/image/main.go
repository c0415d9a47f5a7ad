package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	var o options
	flag.StringVar(&o.binary, "binary", "", "the runner binary: static, linux (required)")
	flag.StringVar(&o.layout, "out", "", "write the OCI image layout to this folder, replacing an earlier one (required)")
	flag.StringVar(&o.tarball, "tar", "", "also write a `docker save` tarball to this file")
	flag.StringVar(&o.tag, "tag", "jsinformer:latest", "the image's name and tag, recorded in the layout and the tarball")
	flag.StringVar(&o.caCerts, "ca-certs", "/etc/ssl/certs/ca-certificates.crt", "PEM bundle of CA certificates to include")
	flag.StringVar(&o.version, "version", "", "value of the org.opencontainers.image.version label")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
