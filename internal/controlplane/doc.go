// Package controlplane starts a real etcd and kube-apiserver, built from source into the
// repository's bin/ folder by `make controlplane`, on free loopback ports in a temporary
// directory. Tests use it through Main from TestMain (one control plane per test package,
// shared by its tests); `make demo` uses Start directly.
//
// Both processes are started with a parent-death signal, so they die with the process that
// started them even when it panics or is killed; Stop is still the normal way out, and stops
// kube-apiserver before etcd because the apiserver's graceful shutdown hangs without etcd.
//
// The apiserver authenticates one static bearer token as a member of system:masters and serves
// a self-signed certificate; clients built from Config skip TLS verification. That is fine for
// a throwaway loopback cluster and nothing else.
package controlplane
