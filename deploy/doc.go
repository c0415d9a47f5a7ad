// Package deploy holds the kustomize base that runs the jsinformer runner in a cluster
// (`kubectl apply -k deploy/`; see docs/deploy.md) and, under monitoring/, the Grafana
// dashboard and Prometheus alert rules for its metrics. It has no Go API: its tests render the
// base with kustomize, dry-run every object against a real kube-apiserver, and run the shipped
// scripts with the shipped ServiceAccount's permissions to prove those suffice.
package deploy
