package bench

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// handledMarker is what every contender prints once it has handled every seeded object.
const handledMarker = "all-handled"

// processScript is the runner's script: the same two fields as the other contenders' handlers,
// and the marker at the last object.
func processScript() string {
	return fmt.Sprintf(`let n = 0;
let r = 0;
let x = "";
export default {
  onAdd(d) {
    r += d.spec.replicas;
    x = d.metadata.name;
    if (++n === %d) console.log("%s");
  },
};
`, seedCount, handledMarker)
}

// process is one contender of BenchmarkProcessInitialSync: a command started per round, and
// whether it exits by itself once it has printed the marker (else it gets SIGTERM).
type process struct {
	name     string
	command  func(b *testing.B, cp *controlplane.ControlPlane, sh *shape) *exec.Cmd
	exitsOwn bool
}

// tailBuffer keeps a process's last output lines. Both output readers write to it.
type tailBuffer struct {
	mu    sync.Mutex
	lines []string
	once  sync.Once // closes the marker channel
	// ownPeak is the peak RSS (VmHWM) a process that exits by itself printed of itself
	// (ownPeakPrefix), in bytes; 0 until printed.
	ownPeak atomic.Int64
}

// ownPeakPrefix starts the line a contender that exits by itself prints last: its own peak
// RSS in kB (VmHWM of /proc/self/status), the figure its ru_maxrss would hide (procSample.hwm).
const ownPeakPrefix = "own-peak-rss-kb "

// peakOf is process pid's peak RSS in bytes (VmHWM); 0 if unreadable (it has exited).
func peakOf(pid int) int64 {
	return peakIn(fmt.Sprintf("/proc/%d/status", pid)) << 10
}

// ownPeakKB is this process's peak RSS in kB (VmHWM), for ownPeakPrefix; 0 if unreadable.
func ownPeakKB() int64 { return peakIn("/proc/self/status") }

// peakIn is the VmHWM in kB of a /proc/PID/status file; 0 if unreadable.
func peakIn(path string) int64 {
	status, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmHWM:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

func (t *tailBuffer) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lines = append(t.lines, line); len(t.lines) > 20 {
		t.lines = t.lines[1:]
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}

// procSample is one whole-process initial sync: wall time from exec until the marker, and
// the process's peak resident set size.
type procSample struct {
	wall time.Duration
	rss  int64
	cpu  time.Duration // user and system CPU of the whole run, shut-down included
	// until is the wall time from exec until runProcessUntil's until returned; 0 without one.
	until time.Duration
	// hwm is the process's own peak RSS (VmHWM): read just before it was told to stop, or
	// printed by itself before it exited (ownPeakPrefix). Unlike rss it leaves out the
	// parent: a child started by os/exec (vfork, then exec) gets the parent's peak RSS in its
	// ru_maxrss, as the kernel folds the replaced address space's peak (the parent's, shared
	// under vfork) into it at exec: a /bin/true started by a process that peaked at 400 MB
	// reports 402 MB. rss is therefore at least this test process's peak, and only logged.
	hwm int64
}

// BenchmarkProcessInitialSync compares whole processes, from exec until every seeded
// Deployment was handled, on both shapes: the runner binary with a JS onAdd, a bare
// client-go dynamic informer with a Go handler (this test binary, re-executed), the
// @kubernetes/client-node informer, and the runner again with --streaming-lists
// (runner-stream: client-go's streaming list instead of the runner's default LIST; ratios
// are of "runner" and "runner-stream"). The Go contenders run from copies loaded as a
// deployed binary is (deployedCopy). Peak RSS is the process's own VmHWM (procSample.hwm; not
// ru_maxrss, which includes this test process's peak); CPU is its user and system time,
// start-up and shut-down included.
// Contenders alternate within each round; medians and ratios are reported per shape. With
// $JSINFORMER_BENCH_BASELINE set, that commit's runner runs too (runner-base).
func BenchmarkProcessInitialSync(b *testing.B) {
	installNodePeer(b)
	runner := deployedCopy(b, buildRunner(b))
	processes := []process{
		{"runner", runnerCommand(runner), false},
		{"client-go", clientGoCommand(deployedCopy(b, testExecutable(b))), true},
		{"node", nodeCommand, true},
		{"runner-stream", runnerCommand(runner, "--streaming-lists"), false},
	}
	// With $JSINFORMER_BENCH_BASELINE, that commit's runner is a fifth contender ("runner-base").
	if bin, _ := baselineRunner(b); bin != "" {
		processes = append(processes, process{"runner-base", runnerCommand(deployedCopy(b, bin)), false})
	}
	for _, sh := range []*shape{small, realistic} {
		b.Run(sh.name, func(b *testing.B) {
			cp := seededShape(b, sh)
			results := runProcessRounds(b, cp, sh, processes)
			b.ReportMetric(listMBOf(b, cp, sh.namespace), "list-MB")
			for _, r := range []struct {
				runner int
				prefix string
			}{{0, ""}, {3, "-stream"}} {
				for _, base := range []int{1, 2} {
					suffix := r.prefix + "-vs-" + processes[base].name
					b.ReportMetric(median(results[r.runner].ms)/median(results[base].ms), "time-ratio"+suffix)
					b.ReportMetric(median(results[r.runner].mb)/median(results[base].mb), "rss-ratio"+suffix)
				}
			}
			if len(processes) > 4 {
				b.ReportMetric(median(results[0].ms)/median(results[4].ms), "time-ratio-vs-runner-base")
				b.ReportMetric(median(results[0].mb)/median(results[4].mb), "rss-ratio-vs-runner-base")
			}
		})
	}
}

// runProcessRounds runs every process once per round, in turn (the order rotated by one each
// round), and reports medians.
func runProcessRounds(b *testing.B, cp *controlplane.ControlPlane, sh *shape, processes []process) []series {
	results := make([]series, len(processes))
	cpu := make([][]float64, len(processes))
	for b.Loop() {
		for round := range syncRounds {
			line := fmt.Sprintf("%s round %d:", sh.name, round+1)
			// The order rotates each round: going first or after a given contender (the API
			// server's heap where the previous one left it) is no contender's fixed lot.
			for k := range processes {
				i := (k + round) % len(processes)
				p := processes[i]
				s := runProcess(b, p.command(b, cp, sh), p.exitsOwn)
				results[i].add(sample{elapsed: s.wall, heap: s.hwm})
				cpu[i] = append(cpu[i], ms(s.cpu))
				line += fmt.Sprintf(" | %s %.0f ms %.1f MB (ru_maxrss %.1f MB) cpu %.0f ms", p.name, ms(s.wall), mb(s.hwm), mb(s.rss), ms(s.cpu))
			}
			b.Logf("%s; this test process's own peak RSS %.1f MB", line, mb(ownPeakKB()<<10))
		}
	}
	for i, p := range processes {
		b.ReportMetric(median(results[i].ms), p.name+"-ms")
		b.ReportMetric(median(results[i].mb), p.name+"-peak-RSS-MB")
		b.ReportMetric(median(cpu[i]), p.name+"-cpu-ms")
	}
	return results
}

// runProcess starts cmd, waits for the marker on its stdout or stderr, stops it unless it
// exits by itself, and returns its wall time to the marker and its peak RSS.
func runProcess(b *testing.B, cmd *exec.Cmd, exitsOwn bool) procSample {
	b.Helper()
	return runProcessUntil(b, cmd, exitsOwn, nil)
}

// runProcessUntil is runProcess that, once the marker is seen, also waits for until (when
// not nil) to return before it stops the process, and records when it returned (procSample.until).
func runProcessUntil(b *testing.B, cmd *exec.Cmd, exitsOwn bool, until func() error) procSample {
	b.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	seen := make(chan struct{})
	tail := &tailBuffer{}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatalf("start %s: %v", cmd.Path, err)
	}
	ended := make(chan struct{}) // both outputs closed: the process is exiting
	go func() {
		var wg sync.WaitGroup
		wg.Go(func() { scanFor(stdout, seen, tail) })
		wg.Go(func() { scanFor(stderr, seen, tail) })
		wg.Wait()
		close(ended)
	}()
	var wall time.Duration
	select {
	case <-seen:
		wall = time.Since(start)
	case <-ended:
		_ = cmd.Wait()
		b.Fatalf("%s ended without printing %q:\n%s", cmd.Path, handledMarker, tail)
	case <-time.After(readyTimeout):
		_ = cmd.Process.Kill()
		b.Fatalf("%s printed no %q within %s:\n%s", cmd.Path, handledMarker, readyTimeout, tail)
	}
	var untilWall time.Duration
	if until != nil {
		if err := until(); err != nil {
			_ = cmd.Process.Kill()
			<-ended
			_ = cmd.Wait()
			b.Fatalf("%s: %v\n%s", cmd.Path, err, tail)
		}
		untilWall = time.Since(start)
	}
	var hwm int64
	if !exitsOwn {
		hwm = readServer(b, cmd.Process.Pid).hwm
		_ = cmd.Process.Signal(syscall.SIGTERM)
	}
	<-ended
	if err := cmd.Wait(); err != nil {
		b.Fatalf("%s: %v\n%s", cmd.Path, err, tail)
	}
	if exitsOwn {
		if hwm = tail.ownPeak.Load(); hwm == 0 {
			b.Fatalf("%s exited without printing its peak RSS (%q):\n%s", cmd.Path, ownPeakPrefix, tail)
		}
	}
	usage := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return procSample{wall: wall, rss: usage.Maxrss * 1024, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), until: untilWall, hwm: hwm}
}

// scanFor reads r to its end, closing seen (once) at the first line with the marker and
// keeping the last lines for a failure message.
func scanFor(r io.Reader, seen chan struct{}, tail *tailBuffer) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		tail.add(line)
		if kb, ok := strings.CutPrefix(line, ownPeakPrefix); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(kb), 10, 64); err == nil {
				tail.ownPeak.Store(n << 10)
			}
		}
		if strings.Contains(line, handledMarker) {
			tail.once.Do(func() { close(seen) })
		}
	}
}

func buildRunner(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "runner")
	cmd := exec.CommandContext(b.Context(), "go", "build", "-o", bin, "github.com/jsinformer/jsinformer/cmd/runner")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build runner: %v\n%s", err, out)
	}
	return bin
}

// runnerCommand runs the runner binary with flags added.
func runnerCommand(bin string, flags ...string) func(*testing.B, *controlplane.ControlPlane, *shape) *exec.Cmd {
	return func(b *testing.B, cp *controlplane.ControlPlane, sh *shape) *exec.Cmd {
		dir := b.TempDir()
		writeScript(b, dir, "count.js", processScript())
		args := append([]string{"--kubeconfig", cp.Kubeconfig, "-n", sh.namespace,
			"--gvr", "apps/v1/deployments", "--scripts", dir}, flags...)
		return exec.CommandContext(b.Context(), bin, args...)
	}
}

func nodeCommand(b *testing.B, cp *controlplane.ControlPlane, sh *shape) *exec.Cmd {
	cmd := exec.CommandContext(b.Context(), "node", "--expose-gc", "informer.mjs", cp.Kubeconfig, sh.namespace)
	cmd.Dir = nodeDir
	return cmd
}
