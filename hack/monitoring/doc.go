// Package monitoring tests the runner's Grafana dashboard and Prometheus alert rules in
// deploy/monitoring: they parse as stock Prometheus parses them, they name only metrics listed
// in deploy/monitoring/metrics.txt, and each alert fires on the failure it is about, and on
// nothing else, on synthetic series.
//
// It is a module of its own because github.com/prometheus/prometheus would upgrade many of the
// main module's dependencies (client-go's among them) if the main module required it. `make
// test` runs it.
package monitoring
