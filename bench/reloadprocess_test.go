package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
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

const (
	// processReloadRounds is how many times each contender is started; contenders alternate.
	processReloadRounds = 4
	// reloadsPerRound is how many reloads one started runner measures.
	reloadsPerRound = 10
	// processReloadPause is the gap before every reload (and after the last, so the collection
	// the engine starts once a reload is done counts): a person saving a file now and then.
	processReloadPause = time.Second
	// profileEnv names a folder: the current runner's reload rounds are CPU-profiled into it
	// (cpu-N.pprof) with its allocations (allocs-N-before/after.pprof; compare with
	// go tool pprof -sample_index=alloc_space -diff_base before after).
	profileEnv = "JSINFORMER_BENCH_PROFILE"
)

// reloadContender is a runner binary BenchmarkProcessReload starts.
type reloadContender struct {
	name    string
	bin     string
	profile bool // CPU-profile its reload rounds into $JSINFORMER_BENCH_PROFILE
}

// reloadRound is what one started runner measured.
type reloadRound struct {
	latencies []float64 // ms, rename to "script reloaded"
	loads     []float64 // ms, the runner's own "took": from compiling to serving (no debounce, no rescan)
	faults    []float64 // thousands of minor page faults from the rename until the reload served
	gc        float64   // collection cycles over the round, from the first write to the pause after the last reload
	allocMB   float64   // bytes allocated over the same span, in MiB
	cpuMS     float64   // process CPU over the same span
	rssMB     float64   // the process's peak RSS, start-up and initial sync included
}

// BenchmarkProcessReload measures hot reload in whole runner processes, as a user meets it:
// the script of BenchmarkReload (one index function, an onAdd) over the 20,000 seeded
// Deployments, saved by atomic rename (write a temporary file, rename it over the script)
// processReloadPause apart; latency runs from just before the rename until the runner logs
// "script reloaded" for the new content (default debounce included). With
// $JSINFORMER_BENCH_BASELINE set, the runner of that commit runs too, the two alternating
// round by round, and the ratios are this tree's over the baseline's. Per contender it
// reports p50 and p99 (nearest rank), and per reload the collection cycles, the bytes
// allocated and the process CPU (from the runner's own /metrics, over the whole round with
// its pauses, so the collection the engine starts after a reload counts), the median of
// the processes' peak RSS, and the p50 and p99 of the minor page faults a reload took (from
// the rename until it served; see minorFaults).
func BenchmarkProcessReload(b *testing.B) {
	cp := seeded(b)
	contenders := []reloadContender{{name: "runner", bin: deployedCopy(b, buildRunner(b)), profile: os.Getenv(profileEnv) != ""}}
	if bin, commit := baselineRunner(b); bin != "" {
		contenders = append(contenders, reloadContender{name: "base-" + commit, bin: deployedCopy(b, bin)})
	}
	rounds := make([][]reloadRound, len(contenders))
	for b.Loop() {
		for round := range processReloadRounds {
			for i, c := range contenders {
				r := runReloadRound(b, cp, c, round)
				rounds[i] = append(rounds[i], r)
				b.Logf("round %d %s: reloads (ms) %.0f, of which loading %.0f, minor page faults (thousands) %.1f, gc %.1f, alloc %.0f MiB, cpu %.0f ms, peak RSS %.0f MiB",
					round+1, c.name, r.latencies, r.loads, r.faults, r.gc, r.allocMB, r.cpuMS, r.rssMB)
			}
		}
	}
	p50 := make([]float64, len(contenders))
	p99 := make([]float64, len(contenders))
	for i, c := range contenders {
		var all, loads, faults, rss []float64
		var gc, alloc, cpu float64
		for _, r := range rounds[i] {
			all = append(all, r.latencies...)
			loads = append(loads, r.loads...)
			faults = append(faults, r.faults...)
			gc, alloc, cpu = gc+r.gc, alloc+r.allocMB, cpu+r.cpuMS
			rss = append(rss, r.rssMB)
		}
		n := float64(len(all))
		p50[i], p99[i] = percentile(all, 50), percentile(all, 99)
		b.ReportMetric(p50[i], c.name+"-p50-ms")
		b.ReportMetric(p99[i], c.name+"-p99-ms")
		b.ReportMetric(percentile(loads, 50), c.name+"-load-p50-ms")
		b.ReportMetric(percentile(faults, 50), c.name+"-kfaults-p50")
		b.ReportMetric(percentile(faults, 99), c.name+"-kfaults-p99")
		b.ReportMetric(gc/n, c.name+"-gc/reload")
		b.ReportMetric(alloc/n, c.name+"-MiB/reload")
		b.ReportMetric(cpu/n, c.name+"-cpu-ms/reload")
		b.ReportMetric(median(rss), c.name+"-peak-RSS-MiB")
	}
	if len(contenders) > 1 {
		b.ReportMetric(p50[0]/p50[1], "p50-ratio")
		b.ReportMetric(p99[0]/p99[1], "p99-ratio")
	}
}

// runReloadRound starts c's runner on a fresh scripts folder, waits until it is ready, saves
// reloadsPerRound new contents and stops it.
func runReloadRound(b *testing.B, cp *controlplane.ControlPlane, c reloadContender, round int) (r reloadRound) {
	b.Helper()
	dir := b.TempDir()
	writeScript(b, dir, "indexed.js", reloadScript(0))
	metricsAddr := freeAddr(b)
	args := []string{"--kubeconfig", cp.Kubeconfig, "--scripts", dir, "--log-format", "json",
		"--metrics-addr", metricsAddr, "--debug-addr", ""}
	var debugAddr string
	if c.profile {
		debugAddr = freeAddr(b)
		args[len(args)-1] = debugAddr
		args = append(args, "--pprof")
	}
	cmd := exec.CommandContext(b.Context(), c.bin, args...)
	logs := startWatched(b, cmd)
	defer func() {
		// Its own peak (VmHWM) before it is stopped: its ru_maxrss would include this
		// process's peak (procSample.hwm).
		r.rssMB = mb(peakOf(cmd.Process.Pid))
		logs.stop(b, cmd)
	}()
	logs.waitReady(b)
	before := scrapeRunner(b, metricsAddr)
	var profiled func()
	if c.profile {
		profiled = profileRound(b, debugAddr, round)
	}
	for i := 1; i <= reloadsPerRound; i++ {
		time.Sleep(processReloadPause) // not measured: latency runs from the rename
		content := reloadScript(round*reloadsPerRound + i)
		reloaded := logs.expect(scriptVersion(content))
		faulted := minorFaults(b, cmd.Process.Pid)
		start := time.Now()
		saveByRename(b, dir, "indexed.js", content)
		if err := waitClosed(reloadTimeout, reloaded); err != nil {
			b.Fatalf("%s reload %d: %v\n%s", c.name, i, err, logs.tail)
		}
		r.latencies = append(r.latencies, ms(time.Since(start)))
		r.faults = append(r.faults, float64(minorFaults(b, cmd.Process.Pid)-faulted)/1000)
		r.loads = append(r.loads, logs.took(scriptVersion(content)))
	}
	time.Sleep(processReloadPause)
	if profiled != nil {
		profiled()
	}
	after := scrapeRunner(b, metricsAddr)
	r.gc = after.gc - before.gc
	r.allocMB = (after.alloc - before.alloc) / (1 << 20)
	r.cpuMS = (after.cpu - before.cpu) * 1000
	return r // rssMB is set by the deferred stop
}

// saveByRename replaces dir/name the way editors and ConfigMap volumes do: the content goes
// to a temporary file first, renamed over the script in one step.
func saveByRename(b *testing.B, dir, name, content string) {
	b.Helper()
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		b.Fatalf("write %s: %v", tmp, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		b.Fatalf("rename over %s: %v", name, err)
	}
}

// minorFaults is the process's count of minor page faults so far (proc(5): field 10 of
// /proc/PID/stat). A page the process touches for the first time is one; on a virtual
// machine that hands freed memory back to its host each costs tens of µs
// (BenchmarkFirstTouch), which is what makes a reload that grows the heap past its earlier
// peak slower than the rest.
func minorFaults(b *testing.B, pid int) uint64 {
	b.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatalf("read the runner's page faults: %v", err)
	}
	// The command name (field 2) is in parentheses and may hold spaces: count after it.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	n, err := strconv.ParseUint(fields[7], 10, 64) // field 10 is the 8th after the name
	if err != nil {
		b.Fatalf("parse the runner's page faults %q: %v", fields[7], err)
	}
	return n
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(b *testing.B) string {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatalf("find a free port: %v", err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// runnerCounters are the runner's cumulative counters that a reload moves.
type runnerCounters struct {
	gc, alloc, cpu float64 // collections, bytes allocated, CPU seconds
}

// scrapeRunner reads the Go and process collectors' counters from the runner's /metrics.
func scrapeRunner(b *testing.B, addr string) runnerCounters {
	b.Helper()
	body := httpGet(b, "http://"+addr+"/metrics")
	values := map[string]float64{}
	for line := range strings.SplitSeq(string(body), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		if f, err := strconv.ParseFloat(value, 64); err == nil {
			values[name] = f
		}
	}
	c := runnerCounters{gc: values["go_gc_duration_seconds_count"], alloc: values["go_memstats_alloc_bytes_total"],
		cpu: values["process_cpu_seconds_total"]}
	if c.gc == 0 || c.alloc == 0 {
		b.Fatalf("runner /metrics lacks the Go collector's counters")
	}
	return c
}

func httpGet(b *testing.B, url string) []byte {
	b.Helper()
	body, err := fetchURL(url)
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// fetchURL is httpGet's request, its failure returned: for a goroutine other than the benchmark's,
// which may not call b.Fatal.
func fetchURL(url string) ([]byte, error) {
	resp, err := http.Get(url) //nolint:noctx // a loopback scrape, bounded by the benchmark's timeout
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("get %s: %s", url, resp.Status)
	}
	return body, nil
}

// getLater starts a get of url on a goroutine of its own; the function returned waits for it
// (its caller owns the goroutine and must call it) and fails b on the benchmark's goroutine.
func getLater(b *testing.B, url string) func() []byte {
	type result struct {
		body []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		body, err := fetchURL(url)
		done <- result{body, err}
	}()
	return func() []byte {
		r := <-done
		if r.err != nil {
			b.Fatal(r.err)
		}
		return r.body
	}
}

// profileRound starts a CPU profile of the runner at debugAddr and takes an allocation
// profile; the function returned waits for the CPU profile and takes a second allocation
// profile, writing all three into $JSINFORMER_BENCH_PROFILE.
func profileRound(b *testing.B, debugAddr string, round int) func() {
	b.Helper()
	dir := os.Getenv(profileEnv)
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			b.Fatalf("write profile: %v", err)
		}
	}
	write(fmt.Sprintf("allocs-%d-before.pprof", round+1), httpGet(b, "http://"+debugAddr+"/debug/pprof/allocs"))
	seconds := int((processReloadPause + 300*time.Millisecond).Seconds() * reloadsPerRound)
	cpu := getLater(b, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", debugAddr, seconds))
	return func() {
		write(fmt.Sprintf("cpu-%d.pprof", round+1), cpu())
		write(fmt.Sprintf("allocs-%d-after.pprof", round+1), httpGet(b, "http://"+debugAddr+"/debug/pprof/allocs"))
	}
}

// watchedLogs follows a runner's JSON log on stderr: readiness, and "script reloaded" by
// version.
type watchedLogs struct {
	ready chan struct{}
	ended chan struct{} // stderr closed: the process is exiting
	tail  *tailBuffer

	mu       sync.Mutex
	reloaded map[string]chan struct{}
	tookMS   map[string]float64 // the "took" of each version's "script reloaded", in ms
	once     sync.Once
}

// startWatched starts cmd with its stderr followed.
func startWatched(b *testing.B, cmd *exec.Cmd) *watchedLogs {
	b.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	w := &watchedLogs{ready: make(chan struct{}), ended: make(chan struct{}), tail: &tailBuffer{}, reloaded: map[string]chan struct{}{}, tookMS: map[string]float64{}}
	if err := cmd.Start(); err != nil {
		b.Fatalf("start %s: %v", cmd.Path, err)
	}
	go w.follow(stderr)
	return w
}

func (w *watchedLogs) follow(r io.Reader) {
	defer close(w.ended)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		w.tail.add(sc.Text())
		var rec struct{ Msg, Version, Took string }
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		switch rec.Msg {
		case "ready":
			w.once.Do(func() { close(w.ready) })
		case "script reloaded":
			took, _ := time.ParseDuration(rec.Took)
			w.mu.Lock()
			w.tookMS[rec.Version] = ms(took)
			if ch, ok := w.reloaded[rec.Version]; ok {
				close(ch)
				delete(w.reloaded, rec.Version)
			}
			w.mu.Unlock()
		}
	}
}

// expect returns a channel closed when the runner logs "script reloaded" for version; call it
// before the change.
func (w *watchedLogs) expect(version string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch := make(chan struct{})
	w.reloaded[version] = ch
	return ch
}

// took is the load time the runner logged with "script reloaded" for version.
func (w *watchedLogs) took(version string) float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tookMS[version]
}

func (w *watchedLogs) waitReady(b *testing.B) {
	b.Helper()
	select {
	case <-w.ready:
	case <-w.ended:
		b.Fatalf("runner exited before ready:\n%s", w.tail)
	case <-time.After(readyTimeout):
		b.Fatalf("runner not ready within %s:\n%s", readyTimeout, w.tail)
	}
}

// stop sends SIGTERM and waits for the runner to exit cleanly.
func (w *watchedLogs) stop(b *testing.B, cmd *exec.Cmd) {
	b.Helper()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.ended:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		<-w.ended
	}
	if err := cmd.Wait(); err != nil {
		b.Errorf("%s: %v\n%s", cmd.Path, err, w.tail)
	}
}
