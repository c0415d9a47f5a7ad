package bench

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// threads calls f with each thread of process pid; a thread gone meanwhile is skipped.
func threads(b *testing.B, pid int, f func(tid int) error) {
	b.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		b.Fatalf("list the threads of %d: %v", pid, err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := f(tid); err != nil && !errors.Is(err, unix.ESRCH) {
			b.Fatalf("thread %d of %d: %v", tid, pid, err)
		}
	}
}

// renice sets the nice value of every thread of process pid (Linux keeps one per thread;
// threads started later inherit their starter's). Lowering it back needs CAP_SYS_NICE.
func renice(b *testing.B, pid, nice int) {
	b.Helper()
	threads(b, pid, func(tid int) error { return unix.Setpriority(unix.PRIO_PROCESS, tid, nice) })
}

// place sets the CPU affinity of every thread of process pid to cpus (every CPU when none
// are given); threads it starts later inherit it from the thread that starts them.
func place(b *testing.B, pid int, cpus ...int) {
	b.Helper()
	var set unix.CPUSet
	if len(cpus) == 0 {
		for i := range runtime.NumCPU() {
			set.Set(i)
		}
	}
	for _, c := range cpus {
		set.Set(c)
	}
	threads(b, pid, func(tid int) error { return unix.SchedSetaffinity(tid, &set) })
}
