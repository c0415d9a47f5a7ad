package bench

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// The steps of BenchmarkAudit's engine part, and what each one is measured by.

// auditMeter measures steps: their time, the report writes the runner counted, the write
// requests kube-apiserver counted, the writer's publishes, and the reports a watching client
// saw change.
type auditMeter struct {
	b     *testing.B
	r     *auditRunner
	e     *engine.Engine
	cs    kubernetes.Interface
	view  *reportView
	steps map[string]*stepSeries
	order []string
	parts map[string]int // report parts per script, as last seen with every result written
}

// stepSeries is one step's figures, a value per round.
type stepSeries struct {
	ms, passMs, writes, api, publishes, changed []float64
}

// mark is the counters at a step's start.
type mark struct {
	writes, publishes, api int
	events                 int64
	snap                   map[string]reportSummary
}

func newAuditMeter(b *testing.B, cp *controlplane.ControlPlane, r *auditRunner, view *reportView) *auditMeter {
	return &auditMeter{b: b, r: r, e: r.e, cs: kubernetes.NewForConfigOrDie(cp.Config), view: view, steps: map[string]*stepSeries{}}
}

func (m *auditMeter) mark() mark {
	w, p := m.e.AuditReportWrites()
	return mark{writes: w, publishes: p, api: apiReportWrites(m.b, m.cs), events: m.view.events.Load(), snap: m.view.snapshot()}
}

// step runs do (which returns once the reports are current, and its time), then checks that
// kube-apiserver counted the writes the runner did, that a client sees every write and (want
// non-nil) the results want, and records the step's figures.
func (m *auditMeter) step(name string, want map[string]map[string]int, do func() (time.Duration, error)) {
	b := m.b
	b.Helper()
	before := m.mark()
	took, err := do()
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	w, p := m.e.AuditReportWrites()
	writes, publishes := w-before.writes, p-before.publishes
	api := apiReportWrites(b, m.cs) - before.api
	if api != writes {
		b.Errorf("%s: kube-apiserver counted %d report writes, the runner %d", name, api, writes)
	}
	// Every write that changes a report is a watch event; a write that changes nothing is none.
	end := time.Now().Add(10 * time.Second)
	for m.view.events.Load()-before.events < int64(api) && time.Now().Before(end) {
		time.Sleep(5 * time.Millisecond)
	}
	if seen := m.view.events.Load() - before.events; seen < int64(api) {
		b.Errorf("%s: %d report writes, %d watch events: %d writes changed nothing", name, api, seen, int64(api)-seen)
	}
	if want != nil {
		waitUntil(b, 10*time.Second, name+": the reports hold "+describeCounts(want), func() bool { return holds(m.view.snapshot(), want) })
	}
	after := m.view.snapshot()
	if want != nil {
		_, m.parts = totals(after)
	}
	s := m.steps[name]
	if s == nil {
		s = &stepSeries{}
		m.steps[name] = s
		m.order = append(m.order, name)
	}
	changed := changedReports(before.snap, after)
	s.ms = append(s.ms, ms(took))
	s.passMs = append(s.passMs, ms(m.r.passed))
	s.writes = append(s.writes, float64(writes))
	s.api = append(s.api, float64(api))
	s.publishes = append(s.publishes, float64(publishes))
	s.changed = append(s.changed, float64(changed))
	pass := ""
	if isSave(name) {
		pass = fmt.Sprintf(" (passes done at %.0f ms)", ms(m.r.passed))
	}
	b.Logf("%-14s %6.0f ms%s | %4d writes (kube-apiserver: %4d) in %2d publishes | %4d reports changed",
		name, ms(took), pass, writes, api, publishes, changed)
}

// report reports every step's medians, and the steady-state ratios: writes per object change
// and per changed report.
func (m *auditMeter) report(flips int) {
	for _, name := range m.order {
		s := m.steps[name]
		m.b.ReportMetric(median(s.ms), name+"-ms")
		if isSave(name) {
			m.b.ReportMetric(median(s.passMs), name+"-pass-ms")
		}
		m.b.ReportMetric(median(s.writes), name+"-writes")
		m.b.ReportMetric(median(s.api), name+"-api-writes")
		m.b.ReportMetric(median(s.changed), name+"-reports-changed")
	}
	for _, name := range []string{"flip-burst", "flip-spread"} {
		if s := m.steps[name]; s != nil {
			m.b.ReportMetric(median(s.api)/float64(flips), name+"-writes/change")
			m.b.ReportMetric(median(s.api)/median(s.changed), name+"-writes/changed-report")
			m.b.ReportMetric(median(s.publishes), name+"-publishes")
			// The goal is at most one write per changed report per window: writes ≤ the
			// reports changed × the windows that wrote.
			m.b.ReportMetric(median(s.api)/(median(s.changed)*median(s.publishes)), name+"-writes-per-report-window")
		}
	}
	for _, file := range auditPolicies {
		m.b.ReportMetric(float64(m.parts[file]), file+"-reports")
	}
	m.b.Logf("report parts per policy: %v, for %d objects each", m.parts, seedCount+flips)
}

// isSave reports whether step name saves policies: its time splits into the passes and the
// writes after them.
func isSave(name string) bool { return strings.Contains(name, "save") }

// flipSpreadGap is the gap between two changes of flip-spread: 20 changes a second, about
// 20 per coalescing window.
const flipSpreadGap = 50 * time.Millisecond

// createFlips creates k Deployments of the benchmark's own in namespace "bench" (shaped as
// the seeded ones, in team payments) and deletes them when the benchmark ends.
func createFlips(b *testing.B, dyn dynamic.Interface, k int) []string {
	b.Helper()
	names := make([]string, k)
	for j := range k {
		obj := deploymentObject(seedCount + j)
		meta := obj["metadata"].(map[string]any)
		names[j] = fmt.Sprintf("audit-flip-%04d", j)
		meta["name"] = names[j]
		meta["labels"].(map[string]any)["team"] = "payments"
		if _, err := dyn.Resource(deploymentsGVR).Namespace(benchNamespace).Create(context.Background(),
			&unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
			b.Fatalf("create flip deployment: %v", err)
		}
	}
	b.Cleanup(func() {
		for _, name := range names {
			if err := dyn.Resource(deploymentsGVR).Namespace(benchNamespace).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
				b.Errorf("delete flip deployment %s: %v", name, err)
			}
		}
	})
	return names
}

// flipTeams sets the team label of every flip Deployment: all at once (gap 0, 16 at a time)
// or one every gap; then it waits until the team policy has flipped failing of them, and
// the reports are current. It returns the time from the first change.
func flipTeams(r *auditRunner, dyn dynamic.Interface, flips []string, team string, gap time.Duration, failing int) (time.Duration, error) {
	want := auditExpect(len(flips), failing)["team.js"]["fail"]
	patch := []byte(`{"metadata":{"labels":{"team":"` + team + `"}}}`)
	client := dyn.Resource(deploymentsGVR).Namespace(benchNamespace)
	start := time.Now()
	var errs []error
	var mu sync.Mutex
	one := func(name string) {
		if _, err := client.Patch(context.Background(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
	}
	if gap == 0 {
		next := make(chan string)
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for name := range next {
					one(name)
				}
			})
		}
		for _, name := range flips {
			next <- name
		}
		close(next)
		wg.Wait()
	} else {
		tick := time.NewTicker(gap)
		for _, name := range flips {
			one(name)
			<-tick.C
		}
		tick.Stop()
	}
	if len(errs) > 0 {
		return 0, fmt.Errorf("patch %d flip deployments: %w", len(errs), errs[0])
	}
	end := start.Add(auditTimeout)
	for r.fails("team.js") != want {
		if time.Now().After(end) {
			return 0, fmt.Errorf("team.js: %d failing, want %d, not within %s", r.fails("team.js"), want, auditTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return r.current(start)
}
