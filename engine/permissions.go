package engine

import (
	"context"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jsinformer/jsinformer/permissions"
	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/status"
)

// The runner checks its own permissions (package permissions): each version's needs are
// computed when it loads and handed to the Checker, whose loop (started and joined by Run)
// asks the API server; a script's call the server refuses is recorded with the rule to add.

// newPermissions builds the checker of a runner on a cluster; nil when turned off.
func (e *Engine) newPermissions() error {
	if e.cfg.PermissionCheckInterval < 0 {
		return nil
	}
	reviewer, err := permissions.NewReviewer(e.cfg.RESTConfig)
	if err != nil {
		return err
	}
	runner, own := permissions.Runner{}, ""
	for _, le := range []*LeaderElection{e.cfg.LeaderElection, e.cfg.Sharding} {
		if le != nil {
			runner = permissions.Runner{LeaderElect: le == e.cfg.LeaderElection, Sharded: le == e.cfg.Sharding,
				ShardCache: e.cfg.ShardCache, LeaseName: le.Name, LeaseNamespace: le.Namespace}
			own = le.Namespace
		}
	}
	needs := runner.Needs()
	if e.cfg.Store != nil {
		needs = append(needs, permissions.StoreNeeds(e.cfg.Store.Namespace)...)
	}
	e.perms = permissions.NewChecker(permissions.CheckerConfig{Reviewer: reviewer, Runner: needs, OwnNamespace: own,
		Interval: e.cfg.PermissionCheckInterval, Logger: e.logger, Changed: e.book.Bump})
	if e.cfg.Registerer != nil {
		e.cfg.Registerer.MustRegister(permissionMetrics{e.perms})
	}
	return nil
}

// startPermissionCheck runs the checker's loop until ctx is done or the returned function is
// called, which stops it and waits for it (Run defers it: it returns on errors too).
func (e *Engine) startPermissionCheck(ctx context.Context) func() {
	if e.perms == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { e.perms.Run(ctx) })
	return func() {
		cancel()
		wg.Wait()
	}
}

// setNeeds hands a loaded version's needs to the checker. Needs that cannot be computed (a
// resource that does not resolve) are left out: the load reports that resource itself.
func (e *Engine) setNeeds(name string, prog *scripting.Program, def scripting.Definition) {
	if e.perms == nil {
		return
	}
	var defaults []scripting.WatchSpec
	for _, r := range e.defaults {
		defaults = append(defaults, scripting.WatchSpec{Resource: r.String()})
	}
	needs, dynamic, err := permissions.Script(prog, def, defaults, e.cfg.Namespace, e.resolver, e.cfg.Admission)
	if err != nil {
		e.logger.Debug("permissions of a script not fully computed", "script", name, "error", err.Error())
	}
	for _, d := range dynamic {
		e.logger.Info("a script makes a call whose permissions are known at run time only", "script", name,
			"call", "k8s."+d.Method, "file", d.File, "line", d.Line)
	}
	e.perms.Set(name, needs)
}

func (e *Engine) forgetNeeds(name string) {
	if e.perms != nil {
		e.perms.Remove(name)
	}
}

// Permissions are what the runner lacks of what its scripts need (from the last check) and
// the calls the API server refused them. Both empty when the check is off. Safe for concurrent
// use.
func (e *Engine) Permissions() (missing []permissions.Need, refused []permissions.Forbidden) {
	if e.perms == nil {
		return nil, nil
	}
	return e.perms.Missing(), e.perms.Forbidden()
}

// PermissionsChecked reports whether the check has answered every permission the loaded
// scripts need, so that an empty Permissions is an answer; false when the check is off.
// Safe for concurrent use.
func (e *Engine) PermissionsChecked() bool { return e.perms != nil && e.perms.Checked() }

func (e *Engine) permissionStatus() []status.PermissionStatus {
	missing, refused := e.Permissions()
	var out []status.PermissionStatus
	for _, n := range missing {
		ns := n.Namespace
		if n.Own {
			ns = e.perms.OwnNamespace()
		}
		out = append(out, status.PermissionStatus{Script: n.Script, Verb: n.Verb, Resource: n.GroupResource(),
			Namespace: ns, Why: n.Why, Grant: n.Rule()})
	}
	for _, f := range refused {
		out = append(out, status.PermissionStatus{Script: f.Script, Verb: f.Verb, Resource: f.GroupResource(),
			Namespace: f.Namespace, Why: f.Why, Grant: f.Rule(), Refused: f.Count})
	}
	return out
}

// refusals wraps a version's client to record the calls the API server forbids, and to
// hand every call to Config.ObserveCalls.
func (e *Engine) refusals(script string, c scripting.Client) scripting.Client {
	if e.perms == nil && e.cfg.ObserveCalls == nil {
		return c
	}
	return permissions.Observe(c, script, e.resolver, func(n permissions.Need, err error) {
		if e.cfg.ObserveCalls != nil {
			e.cfg.ObserveCalls(n, err)
		}
		if e.perms != nil && permissions.IsRefusal(err) {
			e.perms.Refused(n)
		}
	})
}

// permissionMetrics are jsinformer_permission_missing and jsinformer_permission_refused_total,
// read from the checker at scrape time.
type permissionMetrics struct{ c *permissions.Checker }

var (
	missingDesc = prometheus.NewDesc("jsinformer_permission_missing",
		"1 for each permission a loaded script needs that the runner lacks (the start-up and periodic check).",
		[]string{"script", "verb", "resource", "namespace"}, nil)
	refusedDesc = prometheus.NewDesc("jsinformer_permission_refused_total",
		"Calls of scripts the API server answered with Forbidden.",
		[]string{"script", "verb", "resource", "namespace"}, nil)
)

func (m permissionMetrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- missingDesc
	ch <- refusedDesc
}

func (m permissionMetrics) Collect(ch chan<- prometheus.Metric) {
	seen := map[[4]string]bool{}
	for _, n := range m.c.Missing() {
		labels := [4]string{n.Script, n.Verb, n.GroupResource(), n.Namespace}
		if !seen[labels] { // one series even when two reasons need the same permission
			seen[labels] = true
			ch <- prometheus.MustNewConstMetric(missingDesc, prometheus.GaugeValue, 1, labels[:]...)
		}
	}
	for _, f := range m.c.Forbidden() {
		ch <- prometheus.MustNewConstMetric(refusedDesc, prometheus.CounterValue, float64(f.Count),
			f.Script, f.Verb, f.GroupResource(), f.Namespace)
	}
}
