// Package jsoncmp is a separate module that compares JSON decoders on one list of 20,000
// realistic Deployments, for the decoder choice in docs/benchmarks.md: apimachinery's
// unstructured decoder, encoding/json, goccy/go-json, bytedance/sonic, and
// internal/unstructuredjson. It is a module of its own so that the candidates never become
// dependencies of jsinformer. It has no non-test code.
//
//	cd hack/jsoncmp && go test -run '^$' -bench . -benchmem -count 3
package jsoncmp
