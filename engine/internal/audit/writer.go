package audit

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
	// Begin starts a write of the reports of key (ReportKey) if this replica owns it, as a
	// handler call on an object's key under --sharded: end is called once the write is over,
	// so that the key moves to another replica only after it (the ring's drain). Nil: every
	// key is this replica's.
	Begin func(key string) (end func(), ok bool)
	// Generation counts the ring changes this replica applied (nil: none ever): once it
	// moved, the Writer reads the reports again before it compares, since the keys it gained
	// were written by their previous owner.
	Generation func() uint64
	// WriteTimeout bounds each write (0: none, and Run's end cancels it), so that a key being
	// moved away waits for this replica's write on it no longer than the ring's drain timeout.
	// A write begun is finished within it even when Run's context ends: the runner releases
	// its Lease after the Writer returned, so the next owner lists what it wrote.
	WriteTimeout time.Duration
	// DryRun sends every write with dryRun=All: the server checks it and stores nothing.
	DryRun bool
	// Parallel bounds the writes in flight (0: DefaultParallel). The writes of one key
	// (ReportKey) go one after another, in one goroutine, each holding the key (Begin).
	Parallel int
	Logger   *slog.Logger
}

// Writer publishes the results as reports: every Window, if they changed, it builds the
// reports and applies those whose Content differs from what it knows the server holds (read
// by listing its own reports, then what it applied), and deletes its reports no longer
// built. Without the CRDs it keeps the results in memory and checks again every recheck.
//
// Under --sharded every replica holds every result, and each report is written by the
// replica owning its key (ReportKey: one per script and namespace, all parts of a split
// group together); the others neither apply nor delete it. Each write holds its key
// (Begin), so the ring's drain-before-gain hand-over keeps two replicas from writing one
// report at once. After each ring change it applied (Generation) the Writer lists the
// reports again, so that it compares the keys it gained with what their previous owner
// wrote: a hand-over over unchanged results writes nothing.
type Writer struct {
	cfg     WriterConfig
	mu      sync.Mutex               // guards known while writes are in flight
	known   map[ReportID]knownReport // what the server holds; nil until listed
	full    bool                     // known was listed since the last publish: compare every group
	written atomic.Uint64            // Results' seq last published
	retryAt time.Time
	warned  bool
	writes  atomic.Int64  // applies and deletes sent
	passes  atomic.Int64  // publishes that left the reports matching the results
	listed  atomic.Bool   // known was read from the server
	gen     atomic.Uint64 // the ring generation known was listed in
}

// DefaultParallel is how many report writes a Writer has in flight at most, unless told:
// enough to hide a write's round trip (a report of 500 results takes the API server about
// 100 ms), few against the API server's priority-and-fairness seats (the flow of a service
// account has dozens) and the client's QPS.
const DefaultParallel = 8

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
	if (seq == w.written.Load() && w.known != nil && !w.full && w.generation() == w.gen.Load()) || now.Before(w.retryAt) || !w.cfg.Leading() || !w.cfg.Ready() {
		return
	}
	if len(w.cfg.Results.Passing()) > 0 {
		return // a half-done initial pass would rewrite reports it has not reached yet
	}
	if ok := w.checkCRDs(ctx); !ok {
		w.retryAt = now.Add(recheck)
		return
	}
	if err := w.publish(ctx); err != nil && ctx.Err() == nil {
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

// knownReport is what the server holds of one report: its Content, its key (ReportKey), and
// its group (groupOf).
type knownReport struct {
	content, key, name string
	group              ReportID
}

// knownOf is what the server holds of report id labelled scriptLabel.
func knownOf(content, scriptLabel string, id ReportID) knownReport {
	return knownReport{content: content, key: ReportKey(scriptLabel, id.Namespace), name: id.Name,
		group: ReportID{Namespace: id.Namespace, Name: "jsinformer-" + strings.Trim(scriptLabel, "-")}} // as reportName
}

// publish writes the reports of this replica's keys that changed; the seq it built from is
// published once all writes succeeded and the ring did not move meanwhile. After a listing
// it compares every report; otherwise only the parts of the groups changed since the last
// publish (Results.Changed: every part of a group whose part count changed), which the
// others cannot differ from.
func (w *Writer) publish(ctx context.Context) error {
	if gen := w.generation(); w.known == nil || gen != w.gen.Load() {
		if err := w.list(ctx); err != nil {
			return err
		}
		w.gen.Store(gen)
		w.full = true
	}
	seq, want, stale := w.build()
	var applies, deletes []write
	for id, obj := range want {
		applies = append(applies, write{id: id, obj: obj})
	}
	for id, k := range w.known {
		if _, ok := want[id]; !ok && stale(k) {
			deletes = append(deletes, write{id: id})
		}
	}
	if halt, err := w.writeAll(ctx, applies, deletes); halt || err != nil {
		return err
	}
	w.written.Store(seq)
	w.full = false
	w.cfg.Results.Published(seq)
	w.passes.Add(1)
	return nil
}

// build returns the reports to compare with what the server holds, the seq they reflect,
// and which known reports they replace (those not built are to be deleted): every report
// after a listing, else those of the groups changed since the last publish.
func (w *Writer) build() (seq uint64, want map[ReportID]*unstructured.Unstructured, stale func(knownReport) bool) {
	if w.full {
		seq, results := w.cfg.Results.Snapshot()
		return seq, Build(results), func(knownReport) bool { return true }
	}
	seq, groups := w.cfg.Results.Changed(w.written.Load())
	want = map[ReportID]*unstructured.Unstructured{}
	for id, c := range groups {
		buildGroup(want, id, c.Results, c.Buckets)
	}
	return seq, want, func(k knownReport) bool {
		c, ok := groups[k.group]
		return ok && (c.Parts == nil || c.Parts[k.name])
	}
}

// write is one report to bring to obj (nil: to delete).
type write struct {
	id  ReportID
	obj *unstructured.Unstructured
}

// writeAll makes the writes, at most Parallel at once: those of one key in one goroutine,
// its applies (by ID) then its deletes, so that a group's new parts exist before its old
// ones go. After a halt or an error no key starts; the first error is returned once the
// writes in flight are over. The goroutines are started and waited for here.
func (w *Writer) writeAll(ctx context.Context, applies, deletes []write) (halt bool, err error) {
	byKey := map[string][]write{}
	for _, list := range [][]write{applies, deletes} {
		slices.SortFunc(list, func(a, b write) int { return compareIDs(a.id, b.id) })
		for _, wr := range list {
			key := w.keyOf(wr)
			byKey[key] = append(byKey[key], wr)
		}
	}
	var (
		mu      sync.Mutex
		stopped bool
		wg      sync.WaitGroup
	)
	slots := make(chan struct{}, cmp.Or(w.cfg.Parallel, DefaultParallel))
	for _, key := range slices.Sorted(maps.Keys(byKey)) {
		slots <- struct{}{}
		mu.Lock()
		done := stopped
		mu.Unlock()
		if done {
			<-slots
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			for _, wr := range byKey[key] {
				h, e := w.sync(ctx, key, wr.id, wr.obj)
				if !h && e == nil {
					continue
				}
				mu.Lock()
				if !stopped {
					stopped, halt, err = true, h, e
				}
				mu.Unlock()
				return
			}
		})
	}
	wg.Wait()
	return halt, err
}

// keyOf is the key (ReportKey) of a write: its report's script label and namespace.
func (w *Writer) keyOf(wr write) string {
	if wr.obj != nil {
		return ReportKey(wr.obj.GetLabels()[ScriptLabel], wr.id.Namespace)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.known[wr.id].key
}

// sync brings report id to obj (nil: deleted) if this replica owns key, holding the key
// meanwhile. halt reports that nothing was written and the publish is to end unfinished: Run
// is ending, or the ring applied a change since the reports were listed (what is known of
// the key may be its previous owner's; the next tick lists again). Safe from several
// goroutines for different keys.
func (w *Writer) sync(ctx context.Context, key string, id ReportID, obj *unstructured.Unstructured) (halt bool, err error) {
	if ctx.Err() != nil {
		return true, nil
	}
	w.mu.Lock()
	old, had := w.known[id]
	w.mu.Unlock()
	end, ok := w.begin(key)
	if !ok {
		return false, nil // another replica's
	}
	defer end()
	if w.generation() != w.gen.Load() { // asked after Begin: a gained key is held only once its gain counted
		return true, nil
	}
	if w.cfg.WriteTimeout > 0 { // a write begun is finished, also at shutdown, so the next owner lists it
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), w.cfg.WriteTimeout)
		defer cancel()
	}
	if obj == nil {
		err := w.cfg.Client.Resource(id.GVR()).Namespace(id.Namespace).Delete(ctx, id.Name, metav1.DeleteOptions{DryRun: w.dryRun()})
		if err != nil && !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("delete report %s/%s: %w", id.Namespace, id.Name, err)
		}
		w.mu.Lock()
		delete(w.known, id)
		w.mu.Unlock()
		w.writes.Add(1)
		return false, nil
	}
	c := Content(obj)
	if had && old.content == c {
		return false, nil
	}
	if _, err := w.cfg.Client.Resource(id.GVR()).Namespace(id.Namespace).Apply(ctx, id.Name, obj,
		metav1.ApplyOptions{FieldManager: FieldManager, Force: true, DryRun: w.dryRun()}); err != nil {
		return false, fmt.Errorf("apply %s %s/%s: %w", obj.GetKind(), id.Namespace, id.Name, err)
	}
	w.mu.Lock()
	w.known[id] = knownOf(c, obj.GetLabels()[ScriptLabel], id)
	w.mu.Unlock()
	w.writes.Add(1)
	return false, nil
}

func (w *Writer) begin(key string) (end func(), ok bool) {
	if w.cfg.Begin == nil {
		return func() {}, true
	}
	return w.cfg.Begin(key)
}

func (w *Writer) generation() uint64 {
	if w.cfg.Generation == nil {
		return 0
	}
	return w.cfg.Generation()
}

func compareIDs(a, b ReportID) int {
	return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
}

func (w *Writer) dryRun() []string {
	if w.cfg.DryRun {
		return []string{metav1.DryRunAll}
	}
	return nil
}

// list reads the reports the runner wrote before (this process or an earlier one, the
// previous leader, or the replica that owned a key before), so that an unchanged report is
// not written again.
func (w *Writer) list(ctx context.Context) error {
	known := map[ReportID]knownReport{}
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
			label := item.GetLabels()[ScriptLabel]
			if !w.cfg.Owns(label) {
				continue // another runner's, or of a script this one no longer has: left alone
			}
			// Content: the server's numbers decode as int64, as Build's.
			id := ReportID{Namespace: item.GetNamespace(), Name: item.GetName()}
			known[id] = knownOf(Content(item), label, id)
		}
	}
	w.mu.Lock()
	w.known = known
	w.mu.Unlock()
	w.listed.Store(true)
	return nil
}

// Writes is how many report writes (applies and deletes) w made; for tests and benchmarks.
// Safe from any goroutine.
func (w *Writer) Writes() int { return int(w.writes.Load()) }

// Current reports whether the reports were read and those of this replica's keys match the
// results as they are now, in the ring as it is now. Safe from any goroutine.
func (w *Writer) Current() bool {
	return w.listed.Load() && w.written.Load() == w.cfg.Results.Seq() && len(w.cfg.Results.Passing()) == 0 &&
		w.gen.Load() == w.generation()
}

// Passes is how many times w brought the reports up to date with the results (a publish
// that succeeded, whether or not it had anything to write). Safe from any goroutine.
func (w *Writer) Passes() int { return int(w.passes.Load()) }
