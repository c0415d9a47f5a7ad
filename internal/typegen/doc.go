// Package typegen writes TypeScript interfaces for Kubernetes resources from the OpenAPI v3
// schemas a cluster serves (/openapi/v3), built-in and custom resources alike, so that a
// script's `onAdd(d: Deployment)` is typed from what the cluster really serves.
//
// # Contract
//
// Generate reads one OpenAPI v3 document per group version (from a Source: the cluster, or
// recorded files in tests), finds each resource's schema by its x-kubernetes-group-version-kind,
// and names everything to write; Module.Bytes writes one TypeScript module: an exported
// interface per resource, with apiVersion and kind as literal types and metadata.name (and
// namespace, for namespaced resources) required, as they always are on objects from the
// server; every schema those reference; every nested object shape, named by its path; and
// JsonValue.
//
// Names (names.go) are stable: a resource's interface is named after its kind whatever else
// is generated (when resources share a kind, the Preferred one, else the first, keeps it);
// whatever collides with it is renamed. Module.Names are the resources' names, for the hint a
// caller puts in the header.
//
// Types hold at run time: free-form data is JsonValue, never any, so the read-only views
// scripts are handed (View<T>) reach into it; combinator branches that only validate do not
// change an object's type (shape.go). Output is deterministic: properties and schemas are
// sorted.
//
// Nothing here runs goroutines or keeps state between calls; a Source is used from the
// calling goroutine only, and a Module from one goroutine.
package typegen
