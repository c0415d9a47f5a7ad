package controlplane

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
)

// Main is a TestMain body: it starts one control plane for the package, stores it in *cp, runs
// the tests and stops the control plane. In -short mode it starts nothing and leaves *cp nil
// (Require then skips); otherwise missing binaries fail the package with a message naming
// `make controlplane`.
func Main(m *testing.M, cp **ControlPlane) int {
	flag.Parse()
	if testing.Short() {
		return m.Run()
	}
	started, err := Start(context.Background(), Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: integration tests need a control plane: %v\n", err)
		return 1
	}
	*cp = started
	defer func() {
		if err := started.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop control plane: %v\n", err)
		}
	}()
	return m.Run()
}

// Exit runs Main and exits the test binary with its code.
func Exit(m *testing.M, cp **ControlPlane) { os.Exit(Main(m, cp)) }

// Require returns cp, skipping the test in -short mode, where Main started nothing.
func Require(t testing.TB, cp *ControlPlane) *ControlPlane {
	t.Helper()
	if cp == nil {
		if testing.Short() {
			t.Skip("integration test: needs the control plane (not run with -short)")
		}
		t.Fatal("control plane not started: use controlplane.Main in TestMain")
	}
	return cp
}
