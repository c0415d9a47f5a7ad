package bench

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// firstTouchBytes is how much memory BenchmarkFirstTouch maps per round: about what a reload of
// the 20,000 seeded Deployments adds to the heap's peak the first time a runner meets it.
const firstTouchBytes = 32 << 20

// BenchmarkFirstTouch measures what the machine charges for memory a process touches for the
// first time, against touching the same pages again. Every figure of a process that grows its
// heap (a runner's first reload past its earlier peak, a compile, a 100,000-object sync) pays
// it per new page, so it is the machine's state a reader needs next to those figures: on a
// virtual machine whose freed memory goes back to the host (a balloon with free page
// reporting), each first touch costs a host fault. It reports µs per 4 KiB page, fresh and
// reused, and their ratio; the default ns/op is not the figure to quote.
func BenchmarkFirstTouch(b *testing.B) {
	page := os.Getpagesize()
	var fresh, reused time.Duration
	pages := 0
	for b.Loop() {
		mem, err := syscall.Mmap(-1, 0, firstTouchBytes, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			b.Fatalf("map %d bytes: %v", firstTouchBytes, err)
		}
		fresh += touch(mem, page)
		reused += touch(mem, page)
		pages += len(mem) / page
		if err := syscall.Munmap(mem); err != nil {
			b.Fatalf("unmap: %v", err)
		}
	}
	perPage := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) / float64(pages) }
	b.ReportMetric(perPage(fresh), "fresh-µs/page")
	b.ReportMetric(perPage(reused), "reused-µs/page")
	b.ReportMetric(float64(fresh)/float64(reused), "fresh/reused")
}

// touch writes one byte into every page of mem and returns how long that took.
func touch(mem []byte, page int) time.Duration {
	start := time.Now()
	for i := 0; i < len(mem); i += page {
		mem[i]++
	}
	return time.Since(start)
}
