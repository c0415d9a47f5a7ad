package engine

import (
	"context"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

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
	v      *loaded
	cancel context.CancelFunc
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
// it. Loader goroutine only; nil-safe (no audit before Run, none in a driven engine).
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
	s.running[name] = &auditRun{v: want, cancel: cancel}
	s.wg.Go(func() { s.run(ctx, name, want, pass) })
}

// run audits with v until ctx is done, on a runtime made for it and closed after.
func (s *auditSet) run(ctx context.Context, name string, v *loaded, pass uint64) {
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
	audit.NewAuditor(audit.Config{
		Script: name, Mode: def.Admission.Mode, Sources: sources, Results: s.results, Pass: pass, Logger: v.ver.Logger(), Now: s.e.clock.Now,
		Validate: func(req scripting.AdmissionRequest) (scripting.Validation, error) {
			req.Cache = v.ver.AuditCache(req.Resource)
			return rt.Validate(req)
		},
	}).Run(ctx)
}

// AuditResults returns script's current audit results by object key ("RESOURCE|ns/name");
// empty when it does not audit. Safe from any goroutine.
func (e *Engine) AuditResults(script string) map[string]audit.Result {
	if s := e.audits.Load(); s != nil {
		return s.results.Script(script)
	}
	return nil
}
