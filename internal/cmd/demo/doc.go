// Command demo is `make demo`: it starts a local control plane, seeds sample objects, prints a
// KUBECONFIG line, runs the runner on examples/scripts in the foreground, makes a few changes
// so handler output scrolls by, and on Ctrl-C stops the runner and the control plane.
package main
