package bench

import (
	"context"
	"fmt"
	"maps"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	kdynamicinformer "k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// The API server's side of BenchmarkAudit: the report CRDs, the reports as a client sees
// them (reportView), and kube-apiserver's own count of the write requests to them.

var (
	crdGVR    = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	reportGVR = schema.GroupVersionResource{Group: "openreports.io", Version: "v1alpha1", Resource: "reports"}
)

// reportsSelector selects the reports the runner writes.
const reportsSelector = "app.kubernetes.io/managed-by=jsinformer"

// installReportCRDs installs deploy/crds/openreports.yaml and waits until reports are served.
// The CRDs stay for the rest of the process (other benchmarks do not read reports).
func installReportCRDs(b *testing.B, dyn dynamic.Interface) {
	b.Helper()
	data, err := os.ReadFile("../deploy/crds/openreports.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for _, doc := range strings.Split(string(data), "\n---\n")[1:] {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			b.Fatalf("parse CRD: %v", err)
		}
		_, err := dyn.Resource(crdGVR).Create(b.Context(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			b.Fatalf("install CRD: %v", err)
		}
	}
	waitUntil(b, time.Minute, "reports served", func() bool {
		_, err := dyn.Resource(reportGVR).Namespace(benchNamespace).List(b.Context(), metav1.ListOptions{Limit: 1})
		return err == nil
	})
}

// deleteAllReports deletes the runner's reports in namespace "bench" and waits until view has
// none.
func deleteAllReports(b *testing.B, dyn dynamic.Interface, view *reportView) {
	b.Helper()
	err := dyn.Resource(reportGVR).Namespace(benchNamespace).DeleteCollection(context.Background(), metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: reportsSelector})
	if err != nil {
		b.Fatalf("delete the reports: %v", err)
	}
	waitUntil(b, time.Minute, "no report left", func() bool { return view.reports() == 0 })
}

// reportView is the runner's reports in namespace "bench" as an informer sees them: per report
// its script label, resourceVersion and summary (the results are dropped on arrival, so that
// the view's memory does not count in the benchmark process's heap), and how many watch
// events it has seen. Safe for concurrent use.
type reportView struct {
	store  cache.Store
	events atomic.Int64
}

// reportSummary is what the view keeps of a report.
type reportSummary struct {
	script string
	rv     string
	counts map[string]int
}

// watchReports runs a reportView until the benchmark ends.
func watchReports(b *testing.B, cp *controlplane.ControlPlane) *reportView {
	b.Helper()
	strip := func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil // a tombstone
		}
		counts := map[string]any{} // JSON types only: an Unstructured may be deep-copied
		summary, _, _ := unstructured.NestedMap(u.Object, "summary")
		for k, v := range summary {
			if n, ok := v.(int64); ok && n > 0 {
				counts[k] = n
			}
		}
		meta := map[string]any{"name": u.GetName(), "namespace": u.GetNamespace(), "resourceVersion": u.GetResourceVersion(),
			"labels": map[string]any{"jsinformer.dev/script": u.GetLabels()["jsinformer.dev/script"]}}
		return &unstructured.Unstructured{Object: map[string]any{"metadata": meta, "counts": counts}}, nil
	}
	inf := kdynamicinformer.NewFilteredDynamicInformer(dynamic.NewForConfigOrDie(cp.Config), reportGVR, benchNamespace, 0,
		cache.Indexers{}, func(o *metav1.ListOptions) { o.LabelSelector = reportsSelector }).Informer()
	if err := inf.SetTransform(strip); err != nil {
		b.Fatal(err)
	}
	v := &reportView{store: inf.GetStore()}
	count := func(any) { v.events.Add(1) }
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: count,
		UpdateFunc: func(any, any) { v.events.Add(1) }, DeleteFunc: count}); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { inf.RunWithContext(ctx) }) // owned by this benchmark: stopped and joined at its end
	b.Cleanup(func() { cancel(); wg.Wait() })
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		b.Fatal("the reports informer did not sync")
	}
	return v
}

// snapshot is every report by name.
func (v *reportView) snapshot() map[string]reportSummary {
	out := map[string]reportSummary{}
	for _, obj := range v.store.List() {
		u := obj.(*unstructured.Unstructured)
		counts := map[string]int{}
		raw, _ := u.Object["counts"].(map[string]any)
		for k, n := range raw {
			counts[k] = int(n.(int64))
		}
		out[u.GetName()] = reportSummary{script: u.GetLabels()["jsinformer.dev/script"], rv: u.GetResourceVersion(), counts: counts}
	}
	return out
}

func (v *reportView) reports() int { return len(v.store.ListKeys()) }

// totals is the results the reports hold, by script file ("team.js") and outcome, and the
// number of report parts per script.
func totals(snap map[string]reportSummary) (counts map[string]map[string]int, parts map[string]int) {
	counts, parts = map[string]map[string]int{}, map[string]int{}
	for _, r := range snap {
		file := strings.TrimSuffix(r.script, "-js") + ".js"
		if counts[file] == nil {
			counts[file] = map[string]int{"pass": 0, "fail": 0}
		}
		for k, n := range r.counts {
			counts[file][k] += n
		}
		parts[file]++
	}
	return counts, parts
}

// holds reports whether snap's results are want's, for want's scripts.
func holds(snap map[string]reportSummary, want map[string]map[string]int) bool {
	got, _ := totals(snap)
	for file, w := range want {
		if !maps.Equal(got[file], w) {
			return false
		}
	}
	return true
}

// changedReports is how many reports differ between two snapshots: rewritten, created or
// deleted.
func changedReports(before, after map[string]reportSummary) int {
	n := 0
	for name, a := range after {
		if bf, ok := before[name]; !ok || bf.rv != a.rv {
			n++
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			n++
		}
	}
	return n
}

// apiWriteVerbs are the verbs of apiserver_request_total that write.
var apiWriteVerbs = map[string]bool{"CREATE": true, "UPDATE": true, "PATCH": true, "APPLY": true, "DELETE": true, "DELETECOLLECTION": true}

// apiReportWrites is kube-apiserver's own count of write requests to openreports.io
// resources so far (apiserver_request_total, every response code), from its /metrics.
func apiReportWrites(b *testing.B, cs kubernetes.Interface) int {
	b.Helper()
	body, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		b.Fatalf("read kube-apiserver's /metrics: %v", err)
	}
	n, err := countReportWrites(string(body))
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// countReportWrites sums apiserver_request_total's samples of group openreports.io with a
// write verb in a /metrics text exposition.
func countReportWrites(text string) (int, error) {
	total := 0
	for line := range strings.Lines(text) {
		rest, ok := strings.CutPrefix(line, "apiserver_request_total{")
		if !ok || !strings.Contains(rest, `group="openreports.io"`) {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok || !apiWriteVerbs[labelOf(labels, "verb")] {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return 0, fmt.Errorf("parse apiserver_request_total sample %q: %w", strings.TrimSpace(line), err)
		}
		total += int(f)
	}
	return total, nil
}

// labelOf is the value of label name in a sample's label list (`a="x",b="y"`).
func labelOf(labels, name string) string {
	_, after, ok := strings.Cut(","+labels, ","+name+`="`)
	if !ok {
		return ""
	}
	value, _, _ := strings.Cut(after, `"`)
	return value
}

// waitUntil polls cond every 5 ms until it holds; after timeout the benchmark fails with what.
func waitUntil(b *testing.B, timeout time.Duration, what string, cond func() bool) {
	b.Helper()
	end := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(end) {
			b.Fatalf("%s: not within %s", what, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
