package bench

import (
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// What the process and the machine did during a slice: the load, how much of the time some
// task of the machine waited for a CPU (Linux PSI, /proc/pressure/cpu), the CPU this process
// used, its garbage collections (and when each ended, from runtime.MemStats.PauseEnd) and how
// long its goroutines waited to run once runnable (/sched/latencies:seconds).

// procReading is one reading of those counters.
type procReading struct {
	at       time.Time
	load1    float64 // /proc/loadavg, one-minute
	psiSome  int64   // /proc/pressure/cpu "some" total, µs
	cpu      time.Duration
	numGC    uint32
	gcEnds   []int64 // end times of the collections the runtime still remembers (≤ 256)
	gcPause  float64 // /sched/pauses/total/gc:seconds sum estimate
	schedLat *metrics.Float64Histogram
}

// procWindow is the difference of two readings.
type procWindow struct {
	seconds    float64
	load1      float64 // at the window's end
	stalledPct float64 // share of the window in which some task waited for a CPU
	cpuCores   float64 // this process's CPU time per second of wall
	gcs        int
	gcEnds     []int64 // collections that ended in the window
	gcPauseMs  float64 // their stop-the-world pauses, summed
	schedP99Ms float64 // p99 of the goroutines' scheduling latency in the window
}

var procMetrics = [...]string{"/sched/pauses/total/gc:seconds", "/sched/latencies:seconds"}

func readProc() procReading {
	r := procReading{at: time.Now()}
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(data)); len(f) > 0 {
			r.load1, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	if data, err := os.ReadFile("/proc/pressure/cpu"); err == nil {
		line, _, _ := strings.Cut(string(data), "\n")
		if _, total, ok := strings.Cut(line, "total="); ok {
			r.psiSome, _ = strconv.ParseInt(strings.TrimSpace(total), 10, 64)
		}
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		r.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r.numGC = ms.NumGC
	for i := uint32(0); i < min(ms.NumGC, 256); i++ {
		r.gcEnds = append(r.gcEnds, int64(ms.PauseEnd[(ms.NumGC-1-i)%256]))
	}
	s := make([]metrics.Sample, len(procMetrics))
	for i, name := range procMetrics {
		s[i].Name = name
	}
	metrics.Read(s)
	r.gcPause = histSum(s[0].Value.Float64Histogram())
	r.schedLat = s[1].Value.Float64Histogram()
	return r
}

// since is the window from before to r.
func (r procReading) since(before procReading) procWindow {
	wall := r.at.Sub(before.at)
	w := procWindow{seconds: wall.Seconds(), load1: r.load1, gcs: int(r.numGC - before.numGC), gcPauseMs: 1000 * (r.gcPause - before.gcPause)}
	if wall > 0 {
		w.stalledPct = 100 * float64(r.psiSome-before.psiSome) / float64(wall.Microseconds())
		w.cpuCores = float64(r.cpu-before.cpu) / float64(wall)
	}
	w.gcEnds = append(w.gcEnds, r.gcEnds[:min(w.gcs, len(r.gcEnds))]...)
	w.schedP99Ms = 1000 * histDeltaQuantile(before.schedLat, r.schedLat, 0.99)
	return w
}

// histSum estimates the sum of a runtime/metrics histogram from its buckets' lower bounds.
func histSum(h *metrics.Float64Histogram) float64 {
	sum := 0.0
	for i, n := range h.Counts {
		lo := h.Buckets[i]
		if lo < 0 || n == 0 {
			continue
		}
		sum += float64(n) * lo
	}
	return sum
}

// histDeltaQuantile is quantile q of the counts added between two readings of a histogram,
// as the upper bound of the bucket it falls in.
func histDeltaQuantile(before, after *metrics.Float64Histogram, q float64) float64 {
	if before == nil || after == nil || len(before.Counts) != len(after.Counts) {
		return 0
	}
	var total uint64
	for i := range after.Counts {
		total += after.Counts[i] - before.Counts[i]
	}
	if total == 0 {
		return 0
	}
	want := uint64(q * float64(total))
	var seen uint64
	for i := range after.Counts {
		seen += after.Counts[i] - before.Counts[i]
		if seen > want {
			return after.Buckets[i+1]
		}
	}
	return after.Buckets[len(after.Buckets)-1]
}
