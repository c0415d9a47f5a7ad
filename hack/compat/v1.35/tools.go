//go:build tools

// Package compat pins the kube-apiserver v1.35.4 sources that `make test-compat` builds into
// bin/v1.35.4/. It is a separate module so the main module carries no replace lines.
package compat

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
