package engine

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/jsinformer/jsinformer/dynamicinformer"

	"github.com/jsinformer/jsinformer/engine/internal/audit"
	"github.com/jsinformer/jsinformer/scripting"
)

// Audit (admission.audit): each script version that serves validate with audit on gets an
// Auditor (package engine/internal/audit) once it is the version serving: its own goroutine
// and its own runtime, so an audit, however slow, never takes a handler's, reconcile's or
// admission call's runtime, and runs one call at a time under the script's admission
// deadline. A new version replaces the Auditor (the new code re-audits every object); a
// script that stops auditing loses its results. Every runner audits, a follower under
// --leader-elect and every replica under --sharded alike, so that the one that writes a
// report (reports.go: the leader, or the owner of its audit.ReportKey) has every result.

// auditSet is the Auditors running: started by Run, changed by the loader, joined when Run ends.
type auditSet struct {
	ctx     context.Context
	e       *Engine
	results *audit.Results
	running map[string]*auditRun // script → its Auditor; loader goroutine only
	wg      sync.WaitGroup
}

type auditRun struct {
	v       *loaded
	cancel  context.CancelFunc
	auditor atomic.Pointer[audit.Auditor] // set once its runtime is made
}

// auditResults is jsinformer_audit_results: each audit script's results by outcome.
var auditResultsDesc = []string{"script", "result"}

// startAudits makes the engine's audit set and returns what stops it: every Auditor, waited for.
func (e *Engine) startAudits(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	gauge := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "jsinformer_audit_results",
		Help: "Objects audited by each audit script (admission.audit), by result: pass, fail, warn, error, skip."}, auditResultsDesc)
	if e.cfg.Registerer != nil {
		if err := e.cfg.Registerer.Register(gauge); err != nil {
			e.logger.Warn("register audit metrics", "error", err.Error())
		}
	}
	s := &auditSet{ctx: ctx, e: e, running: map[string]*auditRun{}}
	s.results = audit.NewResults(func(script string, counts map[string]int) { setAuditGauge(gauge, script, counts) })
	e.audits.Store(s)
	stopWriter := e.startReportWriter(ctx, s.results)
	return func() {
		cancel()
		s.wg.Wait()
		stopWriter()
	}
}

func setAuditGauge(g *prometheus.GaugeVec, script string, counts map[string]int) {
	total := 0
	for _, n := range counts {
		total += n
	}
	for result, n := range counts {
		if total == 0 {
			g.DeleteLabelValues(script, result)
		} else {
			g.WithLabelValues(script, result).Set(float64(n))
		}
	}
}

// update starts, replaces or stops name's Auditor after the loader changed its plugin p:
// the version serving audits when its definition asks and the memory guard has not stopped
// it. Loader goroutine only; nil-safe (no audit before Run).
func (s *auditSet) update(name string, p *plugin, stopped bool) {
	if s == nil {
		return
	}
	var want *loaded
	if p != nil && p.current != nil && !stopped {
		if def := p.current.ver.Definition(); def.Validate && def.Admission.Audit {
			want = p.current
		}
	}
	run := s.running[name]
	if run != nil && run.v == want {
		return
	}
	if run != nil {
		run.cancel() // it ends within one call; joined by the set's stop
		delete(s.running, name)
	}
	if want == nil {
		if run != nil {
			s.results.DropScript(name)
		}
		return
	}
	pass := s.results.StartPass(name) // now, so that the report writer never sees this script between passes
	ctx, cancel := context.WithCancel(s.ctx)
	run = &auditRun{v: want, cancel: cancel}
	s.running[name] = run
	s.wg.Go(func() { s.run(ctx, name, run, pass) })
}

// idle reports that every Auditor has finished its initial pass and has nothing queued nor
// being audited: what a driver (Engine.Idle) waits for. Loader goroutine only; nil-safe.
func (s *auditSet) idle() bool {
	if s == nil {
		return true
	}
	if len(s.results.Passing()) > 0 {
		return false
	}
	for _, run := range s.running {
		if a := run.auditor.Load(); a != nil && !a.Idle() {
			return false
		}
	}
	return true
}

// run audits with run.v until ctx is done, on a runtime made for it and closed after.
func (s *auditSet) run(ctx context.Context, name string, run *auditRun, pass uint64) {
	v := run.v
	def := v.ver.Definition()
	opts := v.opts
	opts.Timeout, opts.Grace = def.Admission.CallLimits(opts.Timeout)
	rt, err := v.prog.Instantiate(opts)
	if err != nil {
		v.ver.Logger().Warn("audit: instantiate runtime", "error", err.Error())
		s.results.PassDone(name, pass) // nothing to wait for
		return
	}
	defer rt.Close()
	var sources []audit.Source
	for _, sub := range v.ver.Subscriptions() {
		sources = append(sources, audit.Source{Informer: sub.Informer(), Resource: sub.Cache.Resource})
	}
	cfg := audit.Config{
		Script: name, Mode: def.Admission.Mode, Sources: sources, Results: s.results, Pass: pass, Logger: v.ver.Logger(), Now: s.e.clock.Now,
		Validate: func(req scripting.AdmissionRequest) (scripting.Validation, error) {
			req.Cache = v.ver.AuditCache(req.Resource)
			return rt.Validate(req)
		},
		Namespaces: def.Admission.Namespaces(),
	}
	if cfg.Namespaces.ByLabels() {
		handle, err := s.e.factory.Acquire(namespacesKey)
		if err != nil {
			v.ver.Logger().Warn("audit: watch namespaces for admission.namespaceSelector", "error", err.Error())
			s.results.PassDone(name, pass)
			return
		}
		defer handle.Release()
		cfg.NamespaceInformer = handle.Informer()
	}
	a := audit.NewAuditor(cfg)
	run.auditor.Store(a)
	a.Run(ctx)
}

// namespacesKey is the informer of every Namespace: an audit script with
// admission.namespaceSelector selects objects by their namespace's labels from it (shared with
// any script watching namespaces).
var namespacesKey = dynamicinformer.Key{GVR: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}}

// AuditResults returns script's current audit results by object key ("RESOURCE|ns/name");
// empty when it does not audit. Safe from any goroutine.
func (e *Engine) AuditResults(script string) map[string]audit.Result {
	if s := e.audits.Load(); s != nil {
		return s.results.Script(script)
	}
	return nil
}

// AuditReports returns script's audit results as the report objects the runner publishes
// (openreports.io Reports and ClusterReports, grouped and split as the report writer does),
// sorted by namespace then name; false when the script does not audit. Safe from any
// goroutine.
func (e *Engine) AuditReports(script string) ([]*unstructured.Unstructured, bool) {
	s := e.audits.Load()
	if s == nil {
		return nil, false
	}
	byKey := s.results.Script(script)
	if byKey == nil {
		return nil, false
	}
	results := make([]audit.Result, 0, len(byKey))
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		results = append(results, byKey[k])
	}
	built := audit.Build(results)
	ids := slices.SortedFunc(maps.Keys(built), func(a, b audit.ReportID) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	out := make([]*unstructured.Unstructured, len(ids))
	for i, id := range ids {
		out[i] = built[id]
	}
	return out, true
}

// AuditOutcomes are the results an audit gives (pass, fail, warn, error, skip), in the order
// of a report's summary.
var AuditOutcomes = slices.Clone(audit.Outcomes)
