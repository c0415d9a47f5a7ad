package engine

import (
	"context"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

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
				LeaseName: le.Name, LeaseNamespace: le.Namespace}
			own = le.Namespace
		}
	}
	e.perms = permissions.NewChecker(permissions.CheckerConfig{Reviewer: reviewer, Runner: runner.Needs(), OwnNamespace: own,
		Interval: e.cfg.PermissionCheckInterval, Logger: e.logger, Changed: e.book.Bump})
	if e.cfg.Registerer != nil {
		e.cfg.Registerer.MustRegister(permissionMetrics{e.perms})
	}
	return nil
}

// startPermissionCheck runs the checker's loop until ctx is done; the returned function
// waits for it.
func (e *Engine) startPermissionCheck(ctx context.Context) func() {
	if e.perms == nil {
		return func() {}
	}
	var wg sync.WaitGroup
	wg.Go(func() { e.perms.Run(ctx) })
	return wg.Wait
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
	needs, dynamic, err := permissions.Script(prog, def, defaults, e.cfg.Namespace, e.resolver)
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

// refusals wraps a version's client to record the calls the API server forbids.
func (e *Engine) refusals(script string, c scripting.Client) scripting.Client {
	if e.perms == nil {
		return c
	}
	return &refusalClient{Client: c, script: script, e: e}
}

type refusalClient struct {
	scripting.Client
	script string
	e      *Engine
}

// note records err when it is a Forbidden answer to verb on resource in namespace.
func (r *refusalClient) note(err error, call, verb, resource, sub, namespace string) {
	if !apierrors.IsForbidden(err) {
		return
	}
	n := permissions.Need{Script: r.script, Verb: verb, Namespace: namespace, Why: call}
	if res, rerr := r.e.resolver.Resolve(resource); rerr == nil {
		n.Group, n.Resource = res.GVR.Group, res.GVR.Resource
		if !res.Namespaced {
			n.Namespace = ""
		}
	} else {
		n.Resource = resource
	}
	if sub != "" {
		n.Resource += "/" + sub
	}
	r.e.perms.Refused(n)
}

func (r *refusalClient) Get(ctx context.Context, resource, namespace, name string) (scripting.Object, error) {
	obj, err := r.Client.Get(ctx, resource, namespace, name)
	r.note(err, "k8s.get", "get", resource, "", namespace)
	return obj, err
}

func (r *refusalClient) List(ctx context.Context, resource string, opts scripting.ListOptions) ([]scripting.Object, error) {
	objs, err := r.Client.List(ctx, resource, opts)
	r.note(err, "k8s.list", "list", resource, "", opts.Namespace)
	return objs, err
}

func (r *refusalClient) Create(ctx context.Context, resource string, obj scripting.Object) (scripting.Object, error) {
	out, err := r.Client.Create(ctx, resource, obj)
	r.note(err, "k8s.create", "create", resource, "", objectNamespace(obj))
	return out, err
}

func (r *refusalClient) Update(ctx context.Context, resource string, obj scripting.Object) (scripting.Object, error) {
	out, err := r.Client.Update(ctx, resource, obj)
	r.note(err, "k8s.update", "update", resource, "", objectNamespace(obj))
	return out, err
}

func (r *refusalClient) UpdateStatus(ctx context.Context, resource string, obj scripting.Object) (scripting.Object, error) {
	out, err := r.Client.UpdateStatus(ctx, resource, obj)
	r.note(err, "k8s.updateStatus", "update", resource, "status", objectNamespace(obj))
	return out, err
}

func (r *refusalClient) Patch(ctx context.Context, resource, namespace, name string, patch []byte, opts scripting.PatchOptions) (scripting.Object, error) {
	out, err := r.Client.Patch(ctx, resource, namespace, name, patch, opts)
	r.note(err, "k8s.patch", "patch", resource, "", namespace)
	return out, err
}

func (r *refusalClient) PatchStatus(ctx context.Context, resource, namespace, name string, patch []byte, opts scripting.PatchOptions) (scripting.Object, error) {
	out, err := r.Client.PatchStatus(ctx, resource, namespace, name, patch, opts)
	r.note(err, "k8s.patchStatus", "patch", resource, "status", namespace)
	return out, err
}

func (r *refusalClient) Delete(ctx context.Context, resource, namespace, name string, opts scripting.DeleteOptions) error {
	err := r.Client.Delete(ctx, resource, namespace, name, opts)
	r.note(err, "k8s.delete", "delete", resource, "", namespace)
	return err
}

func (r *refusalClient) Event(ctx context.Context, obj scripting.Object, eventType, reason, message string) error {
	err := r.Client.Event(ctx, obj, eventType, reason, message)
	r.note(err, "k8s.event", "create", "v1/events", "", objectNamespace(obj))
	return err
}

func objectNamespace(obj scripting.Object) string {
	meta, _ := obj["metadata"].(map[string]any)
	ns, _ := meta["namespace"].(string)
	return ns
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
