//go:build tools

// Package controlplane pins the kube-apiserver and etcd sources that `make controlplane`
// builds into bin/. It is a separate module so the main module carries no replace lines.
package controlplane

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
