//go:build tools

// Package compat pins the kube-apiserver v1.36.3 sources that `make test-compat` builds into
// bin/v1.36.3/. It is a separate module so the main module carries no replace lines.
package compat

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
