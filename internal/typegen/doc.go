// Package typegen writes TypeScript interfaces for Kubernetes resources from the OpenAPI v3
// schemas a cluster serves (/openapi/v3), built-in and custom resources alike, so that a
// script's `onAdd(d: Deployment)` is typed from what the cluster really serves.
//
// # Contract
//
// Generate reads one OpenAPI v3 document per group version (from a Source: the cluster, or
// recorded files in tests), finds each resource's schema by its x-kubernetes-group-version-kind,
// and writes one TypeScript module: an exported interface per resource, named after its kind,
// with apiVersion and kind as literal types and metadata.name (and namespace, for namespaced
// resources) required, as they always are on objects from the server; and every schema those
// reference, named after the last segment of the schema's name (more segments when two would
// collide). Output is deterministic: properties and schemas are sorted.
//
// Nothing here runs goroutines or keeps state between calls; a Source is used from the
// calling goroutine only.
package typegen
