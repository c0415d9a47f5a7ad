package audit

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
)

// FieldManager is the server-side apply field manager of the reports.
const FieldManager = "jsinformer-audit"

// WriterConfig is what a Writer needs.
type WriterConfig struct {
	Client  dynamic.Interface
	Results *Results
	// Window is how long changes coalesce before the reports they touch are written.
	Window time.Duration
	// Leading reports whether this runner may write (the leader, or no election).
	Leading func() bool
	// HasCRDs reports whether the cluster serves the report resources.
	HasCRDs func(ctx context.Context) (bool, error)
	// OnMissing is told whether the CRDs are missing, on each check.
	OnMissing func(missing bool)
	// Ready reports whether the runner has loaded its scripts folder: until then the Writer
	// does not know which reports are its own, and writes nothing.
	Ready func() bool
	// Owns reports whether a report's ScriptLabel names one of this runner's scripts (a file of
	// its scripts folder): the Writer manages, and deletes when it builds them no more, only
	// the reports of those, so that runners with other folders in the same cluster keep theirs.
	Owns func(scriptLabel string) bool
	// DryRun sends every write with dryRun=All: the server checks it and stores nothing.
	DryRun bool
	Logger *slog.Logger
}

// Writer publishes the results as reports: every Window, if they changed, it builds the
// reports and applies those whose Content differs from what it knows the server holds (read
// once, by listing its own reports, then what it applied), and deletes its reports no longer
// built. Without the CRDs it keeps the results in memory and checks again every recheck.
type Writer struct {
	cfg     WriterConfig
	known   map[ReportID]string // Content the server holds; nil until listed
	written atomic.Uint64       // Results' seq last published
	retryAt time.Time
	warned  bool
	writes  atomic.Int64 // applies and deletes sent
	passes  atomic.Int64 // publishes that left the reports matching the results
	listed  atomic.Bool  // known was read from the server
}

// recheck is how long a missing CRD or a failed write waits before the next try.
const recheck = 30 * time.Second

// NewWriter returns a Writer for cfg; Run starts it.
func NewWriter(cfg WriterConfig) *Writer { return &Writer{cfg: cfg} }

// Run publishes until ctx is done.
func (w *Writer) Run(ctx context.Context) {
	t := time.NewTicker(w.cfg.Window)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			w.tick(ctx, now)
		}
	}
}

func (w *Writer) tick(ctx context.Context, now time.Time) {
	seq := w.cfg.Results.Seq()
	if !w.cfg.Results.Started() {
		return
	}
	if (seq == w.written.Load() && w.known != nil) || now.Before(w.retryAt) || !w.cfg.Leading() || !w.cfg.Ready() {
		return
	}
	if len(w.cfg.Results.Passing()) > 0 {
		return // a half-done initial pass would rewrite reports it has not reached yet
	}
	if ok := w.checkCRDs(ctx); !ok {
		w.retryAt = now.Add(recheck)
		return
	}
	if err := w.publish(ctx); err != nil {
		w.cfg.Logger.Warn("audit: write reports", "error", err.Error())
		w.retryAt = now.Add(recheck)
	}
}

func (w *Writer) checkCRDs(ctx context.Context) bool {
	ok, err := w.cfg.HasCRDs(ctx)
	if err != nil {
		w.cfg.Logger.Warn("audit: look up the report resources", "error", err.Error())
		return false
	}
	w.cfg.OnMissing(!ok)
	if !ok && !w.warned {
		w.warned = true
		w.cfg.Logger.Warn("audit: the cluster does not serve openreports.io/v1alpha1 reports and clusterreports; audit results are kept in memory only (install deploy/crds/openreports.yaml)")
	}
	return ok
}

// publish writes the reports that changed; the seq it built from is published once all
// writes succeeded.
func (w *Writer) publish(ctx context.Context) error {
	if w.known == nil {
		if err := w.list(ctx); err != nil {
			return err
		}
	}
	seq, results := w.cfg.Results.Snapshot()
	want := Build(results)
	for id, obj := range want {
		c := Content(obj)
		if w.known[id] == c {
			continue
		}
		if _, err := w.cfg.Client.Resource(id.GVR()).Namespace(id.Namespace).Apply(ctx, id.Name, obj,
			metav1.ApplyOptions{FieldManager: FieldManager, Force: true, DryRun: w.dryRun()}); err != nil {
			return fmt.Errorf("apply %s %s/%s: %w", obj.GetKind(), id.Namespace, id.Name, err)
		}
		w.known[id] = c
		w.writes.Add(1)
	}
	for id := range w.known {
		if _, ok := want[id]; ok {
			continue
		}
		err := w.cfg.Client.Resource(id.GVR()).Namespace(id.Namespace).Delete(ctx, id.Name, metav1.DeleteOptions{DryRun: w.dryRun()})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete report %s/%s: %w", id.Namespace, id.Name, err)
		}
		delete(w.known, id)
		w.writes.Add(1)
	}
	w.written.Store(seq)
	w.passes.Add(1)
	return nil
}

func (w *Writer) dryRun() []string {
	if w.cfg.DryRun {
		return []string{metav1.DryRunAll}
	}
	return nil
}

// list reads the reports the runner wrote before (this process or an earlier one, or the
// previous leader), so that an unchanged report is not written again.
func (w *Writer) list(ctx context.Context) error {
	known := map[ReportID]string{}
	sel := metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=" + ManagedBy}
	for _, gvr := range []string{"reports", "clusterreports"} {
		res := ReportGVR
		if gvr == "clusterreports" {
			res = ClusterReportGVR
		}
		list, err := w.cfg.Client.Resource(res).List(ctx, sel)
		if err != nil {
			return fmt.Errorf("list %s: %w", gvr, err)
		}
		for i := range list.Items {
			item := &list.Items[i]
			if !w.cfg.Owns(item.GetLabels()[ScriptLabel]) {
				continue // another runner's, or of a script this one no longer has: left alone
			}
			known[ReportID{Namespace: item.GetNamespace(), Name: item.GetName()}] = Content(item) // the server's numbers decode as int64, as Build's
		}
	}
	w.known = known
	w.listed.Store(true)
	return nil
}

// Writes is how many report writes (applies and deletes) w made; for tests and benchmarks.
// Safe from any goroutine.
func (w *Writer) Writes() int { return int(w.writes.Load()) }

// Current reports whether the reports were read and match the results as they are now.
// Safe from any goroutine.
func (w *Writer) Current() bool {
	return w.listed.Load() && w.written.Load() == w.cfg.Results.Seq() && len(w.cfg.Results.Passing()) == 0
}

// Passes is how many times w brought the reports up to date with the results (a publish
// that succeeded, whether or not it had anything to write). Safe from any goroutine.
func (w *Writer) Passes() int { return int(w.passes.Load()) }
