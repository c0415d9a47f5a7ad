// Package deployments makes realistic Deployments for tests and benchmarks: shaped like
// bench/'s (small typical services: three labels, a container with a port, env and
// resources, an Envoy sidecar on every fourth), as the apiserver returns them, defaults and
// one managedFields entry included. Everything is deterministic and freshly allocated on
// every call, so callers may change what they get; the functions are safe for concurrent use.
package deployments
