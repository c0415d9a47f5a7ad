package bench

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// cacheReplica is one runner process of BenchmarkShardCache, started with an empty scripts
// directory: the script is written once the ring has settled (cacheScript).
type cacheReplica struct {
	id, scripts, metrics string
	cmd                  *exec.Cmd
	tail                 *tailBuffer
	handled              chan struct{} // closed at the script's first handledMarker
	ended                chan struct{} // closed once the process has exited (after Wait)
	// atMarker is the process's CPU time and the wall time when handled closed.
	mu        sync.Mutex
	markerAt  time.Time
	markerCPU time.Duration
}

// cacheRunnerArgs are the flags every replica of ring gets: sharded, with the benchmark's
// lease durations (shard_test.go), the debug API off, metrics on a port of its own.
func cacheRunnerArgs(cp *controlplane.ControlPlane, ring, id, scripts, metrics string) []string {
	return []string{"--kubeconfig", cp.Kubeconfig, "--scripts", scripts, "--sharded",
		"--leader-elect-resource-namespace", cacheLeaseNamespace, "--leader-elect-resource-name", ring,
		"--leader-elect-identity", id,
		"--leader-elect-lease-duration", shardLease.String(), "--leader-elect-renew-deadline", shardRenew.String(),
		"--leader-elect-retry-period", shardRetry.String(),
		"--metrics-addr", metrics, "--debug-addr=", "--log-format", "json"}
}

// startCacheReplica starts bin with args (cacheRunnerArgs) and flags. Its output is scanned
// for the marker by a goroutine it owns, which Wait()s for the process and closes ended.
func startCacheReplica(b *testing.B, bin, id, scripts, metrics string, args []string) *cacheReplica {
	b.Helper()
	r := &cacheReplica{id: id, scripts: scripts, metrics: metrics, tail: &tailBuffer{},
		handled: make(chan struct{}), ended: make(chan struct{})}
	r.cmd = exec.Command(bin, args...)
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := r.cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	stderr, err := r.cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		b.Fatalf("start %s: %v", id, err)
	}
	go func() {
		var wg sync.WaitGroup
		wg.Go(func() { r.scan(stdout) })
		wg.Go(func() { r.scan(stderr) })
		wg.Wait()
		_ = r.cmd.Wait()
		close(r.ended)
	}()
	return r
}

// scan reads one of the process's outputs to its end, noting the marker's time and the
// process's CPU then.
func (r *cacheReplica) scan(out io.Reader) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		r.tail.add(line)
		if strings.Contains(line, handledMarker) {
			r.tail.once.Do(func() {
				cpu, _ := cpuOf(r.cmd.Process.Pid)
				r.mu.Lock()
				r.markerAt, r.markerCPU = time.Now(), cpu
				r.mu.Unlock()
				close(r.handled)
			})
		}
	}
}

// marker is when the replica printed the marker, and its CPU time then.
func (r *cacheReplica) marker() (time.Time, time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.markerAt, r.markerCPU
}

// stop ends the replica (SIGTERM, then SIGKILL after 30 s) and waits for it; idempotent.
func (r *cacheReplica) stop() {
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.ended:
	case <-time.After(30 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.ended
	}
}

// kill ends the replica with SIGKILL, as a crash would, and waits until it has exited.
func (r *cacheReplica) kill(b *testing.B) {
	b.Helper()
	if err := r.cmd.Process.Kill(); err != nil {
		b.Fatalf("kill %s: %v", r.id, err)
	}
	<-r.ended
}

// alive fails the benchmark if the replica has exited.
func (r *cacheReplica) alive(b *testing.B) {
	b.Helper()
	select {
	case <-r.ended:
		b.Fatalf("%s exited: %v\n%s", r.id, r.cmd.ProcessState, r.tail)
	default:
	}
}

// gauge is the value of the metric series named exactly series (name and labels) on the
// replica's /metrics, and whether it was there.
func (r *cacheReplica) gauge(series string) (float64, bool) { return r.first(series + " ") }

// first is the value of the first series on the replica's /metrics whose line starts with
// prefix, and whether there was one.
func (r *cacheReplica) first(prefix string) (float64, bool) {
	resp, err := http.Get("http://" + r.metrics + "/metrics") //nolint:noctx // loopback, bounded by the default transport
	if err != nil {
		return 0, false
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, false
	}
	for line := range strings.SplitSeq(string(body), "\n") {
		if strings.HasPrefix(line, prefix) {
			f, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			return f, err == nil
		}
	}
	return 0, false
}

// sum is the sum of every series on the replica's /metrics whose line starts with prefix.
func (r *cacheReplica) sum(prefix string) float64 {
	resp, err := http.Get("http://" + r.metrics + "/metrics") //nolint:noctx // loopback, bounded by the default transport
	if err != nil {
		return 0
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0
	}
	total := 0.0
	for line := range strings.SplitSeq(string(body), "\n") {
		if strings.HasPrefix(line, prefix) {
			f, _ := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			total += f
		}
	}
	return total
}

// procRSS is process pid's resident set (VmRSS) in bytes.
func procRSS(b *testing.B, pid int) int64 { return readServer(b, pid).rss }

// cpuOf is process pid's user and system CPU time so far.
func cpuOf(pid int) (time.Duration, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read stat: %w", err)
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("parse stat %q", stat)
	}
	return time.Duration(u+s) * 10 * time.Millisecond, nil
}

// resetPeak resets process pid's VmHWM to its current RSS (proc(5): clear_refs 5).
func resetPeak(b *testing.B, pid int) {
	b.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		b.Fatalf("reset the peak RSS of %d: %v", pid, err)
	}
}

// cacheScript counts the Deployments it is shown at start-up and prints the marker at the
// want-th, touching the same two fields as processScript. Without a namespace in its watch it
// watches every namespace; under --shard-cache it is partitioned by namespace (the default).
func cacheScript(want int) string {
	return fmt.Sprintf(`let n = 0;
let r = 0;
let x = "";
export default {
  watch: { resource: "apps/v1/deployments" },
  onAdd(d) {
    r += d.spec.replicas;
    x = d.metadata.name;
    if (++n === %d) console.log("%s");
  },
};
`, want, handledMarker)
}

// writeCacheScript saves the script into the replica's directory by rename, as an editor does.
func (r *cacheReplica) writeScript(b *testing.B, want int) {
	b.Helper()
	saveByRename(b, r.scripts, "count.js", cacheScript(want))
}

// newScriptsDir is an empty scripts directory for one replica.
func newScriptsDir(b *testing.B, id string) string {
	b.Helper()
	dir := filepath.Join(b.TempDir(), id)
	if err := os.Mkdir(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	return dir
}
