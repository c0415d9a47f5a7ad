package bench

import (
	"os/exec"
	"runtime"
	"syscall"
	"testing"
)

// TestOwnPeakLeavesOutParent: after this process touched 128 MiB, a small child's ru_maxrss
// still reports at least that (the kernel folds the vforked parent's peak into it at exec),
// while the peak it prints of itself (ownPeakPrefix), the figure the process benchmarks
// use, is its own few MB.
func TestOwnPeakLeavesOutParent(t *testing.T) {
	const parent = 128 << 20
	ballast := make([]byte, parent)
	for i := range ballast {
		ballast[i] = 1
	}
	cmd := exec.CommandContext(t.Context(), "/bin/sh", "-c",
		`echo `+handledMarker+`; awk '/^VmHWM:/ { print "`+ownPeakPrefix+`" $2 }' /proc/self/status`)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sh: %v", err)
	}
	seen, tail := make(chan struct{}), &tailBuffer{}
	scanFor(stdout, seen, tail)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("sh: %v\n%s", err, tail)
	}
	runtime.KeepAlive(ballast)
	maxrss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
	own := tail.ownPeak.Load()
	if maxrss < parent {
		t.Errorf("child's ru_maxrss %d MB, expected at least the parent's %d MB", maxrss>>20, parent>>20)
	}
	if own <= 0 || own > 32<<20 {
		t.Errorf("child's own peak %d bytes, want its own few MB\n%s", own, tail)
	}
}
