package scripting

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/internal/netguard"
)

// BenchmarkFetchOverhead: a handler doing one fetch to a loopback server, against Go's
// http.Client doing the same request, both paced at fetchBenchRate requests a second and
// alternated in slices of fetchBenchSlice, so load on the machine hits both alike. Reported:
// p50 and p99 latency of each (the handler call from hand-over to return; the Go request from
// Do to the body read) and CPU time (user+system of the whole process, server included) per
// request. The runner's own overhead is the difference. docs/benchmarks.md has the numbers.
//
//	go test ./scripting/ -run '^$' -bench BenchmarkFetchOverhead -benchtime 1x
func BenchmarkFetchOverhead(b *testing.B) {
	srv := newBenchServer(b)
	allow, _ := netguard.ParseList([]string{"127.0.0.1"})
	c := netguard.NewClient(netguard.Config{Allow: allow})
	defer c.CloseIdleConnections()
	src := fmt.Sprintf(`export default { async onAdd() { const r = await fetch(%q); await r.text(); } }`, srv)
	s := newTestScript(b, "bench.js", src, Options{HTTP: c.Limited()})
	defer s.Close()
	plain := &http.Client{}
	runJS := func() error { return s.OnAdd(sample(), Event{}) }
	runGo := func() error {
		resp, err := plain.Get(srv)
		if err != nil {
			return err
		}
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		return err
	}
	for range b.N {
		js, goc := &benchSide{}, &benchSide{}
		for round := 0; round < fetchBenchRequests/fetchBenchSlice/2; round++ {
			js.slice(b, runJS)
			goc.slice(b, runGo)
		}
		b.ReportMetric(js.pct(50), "js-p50-µs")
		b.ReportMetric(js.pct(99), "js-p99-µs")
		b.ReportMetric(goc.pct(50), "go-p50-µs")
		b.ReportMetric(goc.pct(99), "go-p99-µs")
		b.ReportMetric(js.cpuPer(), "js-cpu-µs/req")
		b.ReportMetric(goc.cpuPer(), "go-cpu-µs/req")
	}
}

const (
	fetchBenchRate     = 200 // requests a second
	fetchBenchRequests = 4000
	fetchBenchSlice    = 100
)

type benchSide struct {
	lat []time.Duration
	cpu time.Duration
}

// slice runs fetchBenchSlice requests paced at fetchBenchRate, timing each and the CPU used.
func (s *benchSide) slice(b *testing.B, run func() error) {
	tick := time.NewTicker(time.Second / fetchBenchRate)
	defer tick.Stop()
	before := cpuTime()
	for range fetchBenchSlice {
		<-tick.C
		start := time.Now()
		if err := run(); err != nil {
			b.Fatal(err)
		}
		s.lat = append(s.lat, time.Since(start))
	}
	s.cpu += cpuTime() - before
}

func (s *benchSide) pct(p int) float64 {
	l := slices.Clone(s.lat)
	slices.Sort(l)
	return float64(l[(len(l)-1)*p/100].Microseconds())
}

func (s *benchSide) cpuPer() float64 { return float64(s.cpu.Microseconds()) / float64(len(s.lat)) }

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func newBenchServer(b *testing.B) string {
	b.Helper()
	srv := newFetchServerTB(b, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	return srv
}
