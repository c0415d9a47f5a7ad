package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// state is where a phase stands; the last four are final.
type state int

const (
	pending state = iota
	running
	succeeded
	failed
	stopped // started, then stopped because another phase failed or the run was interrupted
	skipped // never started for the same reasons
)

func (s state) String() string {
	return [...]string{"pending", "running", "ok", "FAIL", "stopped", "skipped"}[s]
}

// result is what became of one phase.
type result struct {
	state      state
	start, end time.Time
	cpu        time.Duration // user+sys of the phase's process tree (what it waited for)
	err        error
}

// stopGrace is how long a stopped phase has between SIGTERM and SIGKILL.
const stopGrace = 10 * time.Second

// ended is a phase goroutine's report to the scheduler.
type ended struct {
	i   int
	cpu time.Duration
	err error
}

// run executes plan, each phase as soon as its dependencies have succeeded, and returns one
// result per phase, in plan order. After a failure, or once ctx is done, it starts nothing
// more and stops the running phases. Output goes to out, each line prefixed by its phase.
func run(ctx context.Context, plan []phase, out *lineWriter) []result {
	results := make([]result, len(plan))
	index := make(map[string]int, len(plan))
	for i, p := range plan {
		index[p.name] = i
	}
	done := make(chan ended)
	cancels := make([]context.CancelFunc, len(plan))
	active, halted := 0, false
	halt := func() {
		halted = true
		for i := range cancels {
			if results[i].state == running {
				cancels[i]()
			}
		}
	}
	for {
		if !halted {
			for i, p := range plan {
				if results[i].state == pending && ready(p, index, results) {
					var phaseCtx context.Context
					phaseCtx, cancels[i] = context.WithCancel(context.Background())
					results[i] = result{state: running, start: time.Now()}
					out.note(p.name, "started")
					active++
					go func() { done <- execute(phaseCtx, i, p, out) }()
				}
			}
		}
		if active == 0 {
			break
		}
		select {
		case e := <-done:
			active--
			cancels[e.i]()
			r := &results[e.i]
			r.end, r.cpu, r.err = time.Now(), e.cpu, e.err
			switch {
			case e.err == nil:
				r.state = succeeded
			case halted:
				r.state = stopped
			default:
				r.state = failed
			}
			out.note(plan[e.i].name, fmt.Sprintf("%s in %s (cpu %s)%s", r.state, clock(r.end.Sub(r.start)), clock(r.cpu), errSuffix(e.err)))
			if r.state == failed && !halted {
				halt()
			}
		case <-ctx.Done():
			if !halted {
				halt()
			}
			ctx = context.Background() // seen once; the loop goes on until every phase has ended
		}
	}
	for i := range results {
		if results[i].state == pending {
			results[i].state = skipped
		}
	}
	return results
}

// ready reports whether every dependency of p has succeeded.
func ready(p phase, index map[string]int, results []result) bool {
	for _, d := range p.deps {
		if results[index[d]].state != succeeded {
			return false
		}
	}
	return true
}

// execute runs one phase's command in its own process group and waits for it. Cancelling ctx
// sends the group SIGTERM (SIGKILL after stopGrace). When the command ends, whatever is left
// of its group is killed, so nothing a phase started outlives it.
func execute(ctx context.Context, i int, p phase, out *lineWriter) ended {
	w := out.phase(p.name)
	defer w.flush()
	// One pipe for stdout and stderr that we own, so that Wait returns when the command
	// exits even if a process it left behind still holds the pipe open.
	r, pw, err := os.Pipe()
	if err != nil {
		return ended{i: i, err: fmt.Errorf("start %s: %w", p.name, err)}
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(w, r) // ends at EOF, or when r is closed below
	}()
	defer func() {
		select {
		case <-copied:
		case <-time.After(stopGrace): // a process outside the group holds the pipe
		}
		_ = r.Close()
		<-copied
	}()
	cmd := exec.CommandContext(ctx, "sh", "-c", p.command)
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var atStop time.Duration // the group's CPU when it was told to stop; see groupCPU
	cmd.Cancel = func() error {
		atStop = groupCPU(cmd.Process.Pid)
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
	cmd.WaitDelay = stopGrace
	err = cmd.Start()
	_ = pw.Close() // the command's copies stay open in it
	if err != nil {
		return ended{i: i, err: fmt.Errorf("start %s: %w", p.name, err)}
	}
	err = cmd.Wait()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the group's stragglers; ESRCH when none
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return ended{i: i, err: err, cpu: max(cpu, atStop)}
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return ": " + err.Error()
}
