package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestParsePlan(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		want    []phase
		wantErr string
	}{
		{name: "dependencies on earlier phases", args: []string{"a=true", "b=echo x=y", "c:a,b=make c"},
			want: []phase{{name: "a", command: "true"}, {name: "b", command: "echo x=y"}, {name: "c", deps: []string{"a", "b"}, command: "make c"}}},
		{name: "nothing", wantErr: "no phases"},
		{name: "no command", args: []string{"a"}, wantErr: "want NAME"},
		{name: "blank command", args: []string{"a= "}, wantErr: "want NAME"},
		{name: "bad name", args: []string{"A b=true"}, wantErr: "is not lowercase"},
		{name: "twice", args: []string{"a=true", "a=false"}, wantErr: "defined twice"},
		{name: "later dependency", args: []string{"a:b=true", "b=true"}, wantErr: `dependency "b" is not a phase listed before it`},
		{name: "itself", args: []string{"a:a=true"}, wantErr: `dependency "a"`},
		{name: "empty dependency", args: []string{"a=true", "b:a,=true"}, wantErr: `dependency ""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parsePlan(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parsePlan(%q) = %v, %v; want an error containing %q", tt.args, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || len(got) != len(tt.want) {
				t.Fatalf("parsePlan(%q) = %+v, %v; want %+v", tt.args, got, err, tt.want)
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if g.name != w.name || g.command != w.command || strings.Join(g.deps, ",") != strings.Join(w.deps, ",") {
					t.Errorf("phase %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

// runPlan runs args as a plan and returns the results by name and the output.
func runPlan(ctx context.Context, t *testing.T, args ...string) (map[string]result, string) {
	t.Helper()
	plan, err := parsePlan(args)
	if err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	results := run(ctx, plan, newLineWriter(&out, plan))
	byName := map[string]result{}
	for i, p := range plan {
		byName[p.name] = results[i]
	}
	return byName, out.String()
}

func states(results map[string]result) map[string]string {
	got := map[string]string{}
	for name, r := range results {
		got[name] = r.state.String()
	}
	return got
}

func TestRun(t *testing.T) {
	t.Parallel()
	// A phase that would run for a minute unless stopped; the run must end long before.
	const long = "sleep 60"
	tests := []struct {
		name string
		args func(dir string) []string
		want map[string]string
	}{
		{
			name: "a phase starts only after its dependencies succeeded",
			args: func(dir string) []string {
				a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
				return []string{"a=touch " + a, "b=touch " + b, "c:a,b=test -f " + a + " && test -f " + b}
			},
			want: map[string]string{"a": "ok", "b": "ok", "c": "ok"},
		},
		{
			name: "a failure stops running phases and skips the rest",
			args: func(string) []string {
				return []string{"slow=" + long, "bad=exit 3", "after:bad=true", "afterslow:slow=true"}
			},
			want: map[string]string{"slow": "stopped", "bad": "FAIL", "after": "skipped", "afterslow": "skipped"},
		},
		{
			name: "phases without dependencies between them overlap",
			// Each waits for the other's file: only a concurrent start lets both finish.
			args: func(dir string) []string {
				x, y := filepath.Join(dir, "x"), filepath.Join(dir, "y")
				wait := func(f string) string {
					return "i=0; until test -f " + f + "; do i=$((i+1)); test $i -lt 300 || exit 1; sleep 0.1; done"
				}
				return []string{"x=touch " + x + "; " + wait(y), "y=touch " + y + "; " + wait(x)}
			},
			want: map[string]string{"x": "ok", "y": "ok"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			began := time.Now()
			results, out := runPlan(t.Context(), t, tt.args(t.TempDir())...)
			got := states(results)
			for name, want := range tt.want {
				if got[name] != want {
					t.Errorf("%s: %s, want %s\noutput:\n%s", name, got[name], want, out)
				}
			}
			if d := time.Since(began); d > 40*time.Second {
				t.Errorf("run took %s: a stopped phase was not stopped", d)
			}
		})
	}
}

// TestInterrupted: a cancelled context stops what runs, starts nothing more, and the exit code
// says interrupted.
func TestInterrupted(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	results, out := runPlan(ctx, t, "slow=sleep 60", "next:slow=true")
	if got := states(results); got["slow"] != "stopped" || got["next"] != "skipped" {
		t.Fatalf("states %v, want slow stopped and next skipped\n%s", got, out)
	}
	if code := exitCode([]result{results["slow"], results["next"]}, true); code != 130 {
		t.Errorf("exit code %d, want 130", code)
	}
}

// TestNothingOutlivesItsPhase: a process a phase leaves running in the background is killed
// when the phase ends, and the phase does not wait for it.
func TestNothingOutlivesItsPhase(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	began := time.Now()
	results, out := runPlan(t.Context(), t, "bg=sleep 60 & echo $! > "+pidFile+"; echo left it")
	if r := results["bg"]; r.state != succeeded || !strings.Contains(out, "[bg] left it\n") {
		t.Fatalf("bg: %v (%v)\n%s", r.state, r.err, out)
	}
	if d := time.Since(began); d >= stopGrace {
		t.Errorf("the phase took %s: it waited for its background process", d)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for syscall.Kill(pid, 0) == nil { // until it is gone (and reaped)
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d left by the phase still runs", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCPUCountsDescendants: a phase's CPU time includes the processes its command waited for.
func TestCPUCountsDescendants(t *testing.T) {
	t.Parallel()
	busy := `sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'`
	results, out := runPlan(t.Context(), t, "busy="+busy, "idle=true")
	if r := results["busy"]; r.state != succeeded || r.cpu < 50*time.Millisecond {
		t.Fatalf("busy: %v, cpu %s; want ok with at least 50ms of the child's CPU\n%s", r.state, r.cpu, out)
	}
	if r := results["idle"]; r.cpu >= results["busy"].cpu {
		t.Errorf("idle phase cpu %s >= busy phase cpu %s", r.cpu, results["busy"].cpu)
	}
}

// TestCPUOfAStoppedPhase: a phase stopped while a tool below its shell is busy still counts
// that tool's CPU (SIGTERM ends the shell before it reaps the tool, so the shell's rusage
// alone says 0:00).
func TestCPUOfAStoppedPhase(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		defer cancel()
		busy := 500 * time.Millisecond
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) && processCPU(pidFile) < busy {
			time.Sleep(20 * time.Millisecond)
		}
	}()
	busy := `sh -c 'echo $$ > ` + pidFile + `; while :; do :; done'; true`
	results, out := runPlan(ctx, t, "busy="+busy)
	if r := results["busy"]; r.state != stopped || r.cpu < 500*time.Millisecond {
		t.Fatalf("busy: %v, cpu %s; want stopped with at least the 500ms its child ran\n%s", r.state, r.cpu, out)
	}
}

// processCPU is the CPU time so far of the process whose pid is in pidFile, 0 until it is.
func processCPU(pidFile string) time.Duration {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return 0
	}
	stat, err := os.ReadFile("/proc/" + strings.TrimSpace(string(b)) + "/stat")
	if err != nil {
		return 0
	}
	_, ticks, _ := parseStat(stat)
	return time.Duration(ticks) * time.Second / userHZ
}

func TestParseStat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, line string
		pgid       int
		ticks      int64
		ok         bool
	}{
		{"plain", "42 (sh) S 1 40 40 0 -1 4194560 100 0 0 0 7 3 11 13 20 0 1 0 5 0 0", 40, 34, true},
		{"name with spaces and parens", "42 (a (b) c) R 1 41 41 0 -1 0 0 0 0 0 1 2 3 4 20 0 1 0 5 0 0", 41, 10, true},
		{"truncated", "42 (sh) S 1 40", 0, 0, false},
		{"no name", "garbage", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pgid, ticks, ok := parseStat([]byte(tt.line))
			if pgid != tt.pgid || ticks != tt.ticks || ok != tt.ok {
				t.Errorf("parseStat = %d, %d, %v; want %d, %d, %v", pgid, ticks, ok, tt.pgid, tt.ticks, tt.ok)
			}
		})
	}
}

func TestOutputLines(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	lw := newLineWriter(&out, []phase{{name: "a"}, {name: "long"}})
	w := lw.phase("a")
	for _, s := range []string{"one", "\ntw", "o\nthree\n", "four"} {
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	w.flush()
	lw.note("long", "started")
	want := "[a]    one\n[a]    two\n[a]    three\n[a]    four\n[long] == started\n"
	if out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
}

// TestOutputLinesNeverSplit: lines from concurrent phases come out whole.
func TestOutputLinesNeverSplit(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	plan := []phase{{name: "x"}, {name: "y"}}
	lw := newLineWriter(&out, plan)
	var wg sync.WaitGroup
	for _, p := range plan {
		wg.Go(func() {
			w := lw.phase(p.name)
			for range 500 {
				_, _ = w.Write([]byte(p.name + p.name + p.name))
				_, _ = w.Write([]byte(p.name + "\n"))
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 1000 {
		t.Fatalf("%d lines, want 1000", len(lines))
	}
	for _, l := range lines {
		if l != "[x] xxxx" && l != "[y] yyyy" {
			t.Fatalf("line %q was split or mixed", l)
		}
	}
}

func TestSummary(t *testing.T) {
	t.Parallel()
	began := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	plan := []phase{{name: "modules"}, {name: "vet", deps: []string{"modules"}}, {name: "test", deps: []string{"vet"}}}
	results := []result{
		{state: succeeded, start: began, end: began.Add(41 * time.Second), cpu: 9 * time.Second},
		{state: failed, start: began.Add(41 * time.Second), end: began.Add(3*time.Minute + 2*time.Second), cpu: 5 * time.Minute, err: errors.New("exit status 1")},
		{state: skipped},
	}
	var out bytes.Buffer
	summary(&out, "make test", plan, results, began, began.Add(3*time.Minute+2*time.Second), "")
	want := []string{
		"make test: phases",
		"modules  ok       +0:00  0:41  0:09",
		"vet      FAIL     +0:41  2:21  5:00  modules",
		"test     skipped  -      -     0:00  vet",
		"total    FAIL            3:02  5:09",
	}
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			t.Errorf("summary lacks %q:\n%s", w, out.String())
		}
	}
}

func TestClock(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		0: "0:00", 499 * time.Millisecond: "0:00", 61 * time.Second: "1:01", 3723 * time.Second: "1:02:03",
	} {
		if got := clock(d); got != want {
			t.Errorf("clock(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestExitCode(t *testing.T) {
	t.Parallel()
	ok, bad := result{state: succeeded}, result{state: failed}
	tests := []struct {
		results     []result
		interrupted bool
		want        int
	}{
		{[]result{ok, ok}, false, 0},
		{[]result{ok, bad}, false, 1},
		{[]result{ok, {state: skipped}}, false, 1},
		{[]result{ok, ok}, true, 130},
	}
	for _, tt := range tests {
		if got := exitCode(tt.results, tt.interrupted); got != tt.want {
			t.Errorf("exitCode(%v, %v) = %d, want %d", tt.results, tt.interrupted, got, tt.want)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the concurrent writers of a run.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
