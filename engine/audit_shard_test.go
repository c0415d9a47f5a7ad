package engine_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/engine/internal/audit"
	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/sharding"
)

// reportRequests counts, on the wire, the requests one runner made on openreports.io
// reports that the API server accepted: writes (applies and deletes) by report, and lists.
type reportRequests struct {
	mu     sync.Mutex
	writes map[string][]string // reportPath → methods, in order
	lists  int
}

// reportPath is how reportRequests names a Report: "namespaces/NS/reports/NAME".
func reportPath(ns, name string) string { return "namespaces/" + ns + "/reports/" + name }

// counting makes the runner's requests go through r; compose it with the other tweaks.
func (r *reportRequests) counting(c *engine.Config) {
	r.writes = map[string][]string{}
	c.RESTConfig = rest.CopyConfig(c.RESTConfig)
	c.RESTConfig.Wrap(func(rt http.RoundTripper) http.RoundTripper { // innermost: what reaches the server
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			if err != nil || resp.StatusCode >= 300 || !strings.HasPrefix(req.URL.Path, "/apis/openreports.io/") {
				return resp, err
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			switch req.Method {
			case http.MethodPatch, http.MethodDelete, http.MethodPut, http.MethodPost:
				name := strings.TrimPrefix(req.URL.Path, "/apis/openreports.io/v1alpha1/")
				r.writes[name] = append(r.writes[name], req.Method)
			case http.MethodGet:
				if req.URL.Query().Get("watch") != "true" && strings.HasSuffix(req.URL.Path, "reports") {
					r.lists++
				}
			}
			return resp, err
		})
	})
}

// snapshot returns the writes by report (a copy) and the lists so far.
func (r *reportRequests) snapshot() (writes map[string][]string, lists int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	writes = map[string][]string{}
	for k, v := range r.writes {
		writes[k] = slices.Clone(v)
	}
	return writes, r.lists
}

func tweaks(all ...func(*engine.Config)) func(*engine.Config) {
	return func(c *engine.Config) {
		for _, tw := range all {
			tw(c)
		}
	}
}

// ownedScripts returns n script names prefix-N.js whose reports in ns id owns in ring.
func ownedScripts(ring sharding.Ring, prefix, ns, id string, n int) []string {
	var out []string
	for i := 0; len(out) < n; i++ {
		name := fmt.Sprintf("%s-%d.js", prefix, i)
		if ring.Owner(audit.ReportKey(audit.ScriptLabelValue(name), ns)) == id {
			out = append(out, name)
		}
	}
	return out
}

// reportName is the name of script's (unsplit) report.
func reportName(script string) string { return "jsinformer-" + audit.ScriptLabelValue(script) }

// reportState reads script's report in ns: each subject's result, the summary and the
// resourceVersion; ok false when there is none.
type reportState struct {
	results, summary string
	rv               string
}

func readReport(t *testing.T, dyn dynamic.Interface, ns, script string) (reportState, bool) {
	t.Helper()
	u, err := dyn.Resource(reportGVR).Namespace(ns).Get(t.Context(), reportName(script), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return reportState{}, false
	}
	if err != nil {
		t.Fatalf("get report %s/%s: %v", ns, reportName(script), err)
	}
	byName := map[string]string{}
	items, _, _ := unstructured.NestedSlice(u.Object, "results")
	for _, it := range items {
		m := it.(map[string]any)
		if m["policy"] != script {
			t.Errorf("report %s: policy %v, want %s", u.GetName(), m["policy"], script)
		}
		byName[m["resources"].([]any)[0].(map[string]any)["name"].(string)] = fmt.Sprint(m["result"], ": ", m["message"])
	}
	var results []string
	for _, k := range slices.Sorted(maps.Keys(byName)) {
		results = append(results, k+"="+byName[k])
	}
	summary, _, _ := unstructured.NestedMap(u.Object, "summary")
	return reportState{results: strings.Join(results, ", "), summary: fmt.Sprint(summary), rv: u.GetResourceVersion()}, true
}

// deleteScriptReports deletes the reports of scripts when the test ends (the engines stopped
// first: cleanups run last first), leaving the parallel tests' alone.
func deleteScriptReports(t *testing.T, dyn dynamic.Interface, scripts ...string) {
	t.Cleanup(func() {
		for _, s := range scripts {
			sel := metav1.ListOptions{LabelSelector: audit.ScriptLabel + "=" + audit.ScriptLabelValue(s)}
			list, err := dyn.Resource(reportGVR).List(context.Background(), sel)
			if err != nil {
				t.Errorf("list the reports of %s: %v", s, err)
				continue
			}
			for _, u := range list.Items {
				err := dyn.Resource(reportGVR).Namespace(u.GetNamespace()).Delete(context.Background(), u.GetName(), metav1.DeleteOptions{})
				if err != nil && !apierrors.IsNotFound(err) {
					t.Errorf("delete report %s/%s: %v", u.GetNamespace(), u.GetName(), err)
				}
			}
		}
	})
}

// TestAuditShardedReports: two --sharded replicas audit every object, and each report is
// written by the replica owning its key only, with the same content whichever replica that
// is; when an object is fixed each report is written once more, by its owner. Hand-overs
// over unchanged results write nothing: a replica stopping (the other reads the reports
// again and finds them current) or joining. A change not yet written when its owner stops is
// written once, by one replica. The one left keeps every report up to date: an object
// deleted, a policy removed. Writes are counted on each replica's wire.
func TestAuditShardedReports(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	dyn := dynamic.NewForConfigOrDie(cp.Config)
	installReportCRDsOnly(t, dyn)
	ns := uniqueName("audit-sharded")
	ring := sharding.NewRing("a", "b")
	ownedBy := map[string]string{}
	var scripts []string
	for _, id := range []string{"a", "b"} {
		for _, s := range ownedScripts(ring, "shardaudit", ns, id, 2) {
			ownedBy[s] = id
			scripts = append(scripts, s)
		}
	}
	deleteScriptReports(t, dyn, scripts...)
	// The replicas by name, b again being the second runner with identity b.
	reqs := map[string]*reportRequests{"a": {}, "b": {}, "b again": {}}
	a := startEngine(t, nil, tweaks(shardedAs(ns, ns, "a"), reqs["a"].counting))
	a.namespace(t, ns)
	b := startEngine(t, nil, tweaks(shardedAs(ns, ns, "b"), reqs["b"].counting))
	logs := []*runner{a, b}
	defer func() {
		if t.Failed() {
			for _, r := range logs {
				t.Logf("log of %s:\n%s", r.dir, r.log.dump())
			}
		}
	}()
	waitRing(t, a, 2)
	waitRing(t, b, 2)
	for i, name := range []string{"bad-0", "bad-1", "good-0", "good-1"} {
		var labels map[string]any
		if i >= 2 {
			labels = map[string]any{"team": "x"}
		}
		a.create(t, configmapsGVR, configmap(ns, name, labels, nil))
	}
	for _, s := range scripts {
		a.write(t, s, teamAuditIn(ns))
		b.write(t, s, teamAuditIn(ns))
	}

	// waitReports waits until every script's report says want and every replica running
	// has published what it owns; it returns the reports.
	waitReports := func(what, want string, running ...*runner) map[string]reportState {
		t.Helper()
		got := map[string]reportState{}
		waitFor(t, what, func() bool {
			for _, r := range running {
				if !r.engine.AuditReportsCurrent() {
					return false
				}
			}
			for _, s := range scripts {
				st, ok := readReport(t, dyn, ns, s)
				if !ok || st.results != want {
					return false
				}
				got[s] = st
			}
			return true
		})
		for _, s := range scripts[1:] {
			if got[s].summary != got[scripts[0]].summary {
				t.Errorf("summary of %s (owned by %s) = %s; %s's (owned by %s) = %s: want the same", s, ownedBy[s], got[s].summary,
					scripts[0], ownedBy[scripts[0]], got[scripts[0]].summary)
			}
		}
		return got
	}
	type writeLog = map[string]map[string][]string // replica → report → methods
	// wrote checks that since before each replica wrote each report as want says (nil:
	// not at all), and no other report; it returns the writes so far.
	wrote := func(step string, before writeLog, want func(replica, script string) []string) writeLog {
		t.Helper()
		now := writeLog{}
		for replica, r := range reqs {
			now[replica], _ = r.snapshot()
			for _, s := range scripts {
				name := reportPath(ns, reportName(s))
				if added := now[replica][name][len(before[replica][name]):]; !slices.Equal(added, want(replica, s)) {
					t.Errorf("%s: %s wrote %s (owned by %s) %v, want %v", step, replica, name, ownedBy[s], added, want(replica, s))
				}
			}
			for name := range now[replica] {
				if !strings.HasPrefix(name, reportPath(ns, "jsinformer-shardaudit-")) {
					t.Errorf("%s: %s wrote report %s, not one of its scripts'", step, replica, name)
				}
			}
		}
		return now
	}
	byOwner := func(replica, s string) []string { // the first runners "a" and "b"
		if replica == ownedBy[s] {
			return []string{http.MethodPatch}
		}
		return nil
	}
	nothing := func(string, string) []string { return nil }
	// replicaLists is how many times replica listed the reports.
	replicaLists := func(replica string) int { _, n := reqs[replica].snapshot(); return n }
	const (
		allBad     = "bad-0=fail: label 'team' is required, bad-1=fail: label 'team' is required, good-0=pass: , good-1=pass: "
		oneFixed   = "bad-0=pass: , bad-1=fail: label 'team' is required, good-0=pass: , good-1=pass: "
		bothFixed  = "bad-0=pass: , bad-1=pass: , good-0=pass: , good-1=pass: "
		oneDeleted = "bad-0=pass: , bad-1=pass: , good-0=pass: "
	)

	// Each replica writes the reports of its keys, once.
	first := waitReports("every report, each owner's published", allBad, a, b)
	writes := wrote("initial pass", writeLog{}, byOwner)

	// A fixed object: each report is written once more, by its owner.
	a.patch(t, configmapsGVR, ns, "bad-0", `{"metadata":{"labels":{"team":"y"}}}`)
	fixed := waitReports("bad-0 passing in every report", oneFixed, a, b)
	writes = wrote("bad-0 fixed", writes, byOwner)
	for _, s := range scripts {
		if fixed[s].rv == first[s].rv {
			t.Errorf("report of %s not rewritten when bad-0 was fixed", s)
		}
	}
	same := func(step string, before, after map[string]reportState) {
		t.Helper()
		for _, s := range scripts {
			if after[s].rv != before[s].rv {
				t.Errorf("%s: report of %s (owned by %s) rewritten: resourceVersion %s → %s", step, s, ownedBy[s], before[s].rv, after[s].rv)
			}
		}
	}

	// b stops (as on SIGTERM): a gains b's keys, reads the reports again, and writes none.
	listsBefore := replicaLists("a")
	if stopped, err := b.stop(30e9); !stopped || err != nil {
		t.Fatalf("stop b: stopped %v, err %v", stopped, err)
	}
	waitRing(t, a, 1)
	handedOver := waitReports("a current in the ring of one", oneFixed, a)
	writes = wrote("b stopped", writes, nothing)
	if lists := replicaLists("a"); lists <= listsBefore {
		t.Errorf("a listed the reports %d times after b stopped, %d before: it compared the keys it gained with nothing", lists, listsBefore)
	}
	same("b stopped", fixed, handedOver)

	// b joins again: it takes its keys back, and neither writes.
	b = startEngine(t, map[string]string{}, tweaks(shardedAs(ns, ns, "b"), reqs["b again"].counting))
	logs = append(logs, b)
	for _, s := range scripts {
		b.write(t, s, teamAuditIn(ns))
	}
	waitRing(t, a, 2)
	waitRing(t, b, 2)
	rejoined := waitReports("both current in the ring of two again", oneFixed, a, b)
	writes = wrote("b joined again", writes, nothing)
	same("b joined again", fixed, rejoined)

	// An object fixed, and b stopped as soon as a has audited it: each report of b's keys is
	// written once, by b before it stopped or by a after, never by both; a's by a.
	a.patch(t, configmapsGVR, ns, "bad-1", `{"metadata":{"labels":{"team":"y"}}}`)
	waitFor(t, "a's audit of the fixed bad-1", func() bool {
		for _, s := range scripts {
			if a.engine.AuditResults(s)["v1/configmaps|"+ns+"/bad-1"].Result != "pass" {
				return false
			}
		}
		return true
	})
	if stopped, err := b.stop(30e9); !stopped || err != nil {
		t.Fatalf("stop b again: stopped %v, err %v", stopped, err)
	}
	waitRing(t, a, 1)
	waitReports("bad-1 passing in every report, a alone", bothFixed, a)
	now := writeLog{}
	for replica, r := range reqs {
		now[replica], _ = r.snapshot()
	}
	for _, s := range scripts {
		name := reportPath(ns, reportName(s))
		var all []string
		for _, replica := range []string{"a", "b", "b again"} {
			all = append(all, now[replica][name][len(writes[replica][name]):]...)
		}
		byA := now["a"][name][len(writes["a"][name]):]
		if !slices.Equal(all, []string{http.MethodPatch}) || ownedBy[s] == "a" && len(byA) != 1 {
			t.Errorf("bad-1 fixed across b's stop: %s (owned by %s) written %v in all, %v by a; want one PATCH, a's own by a", name, ownedBy[s], all, byA)
		}
	}
	writes = now

	// a keeps every report, b's former ones included: an object deleted goes from each.
	a.delete(t, configmapsGVR, ns, "good-1")
	waitReports("good-1 gone from every report", oneDeleted, a)
	writes = wrote("good-1 deleted", writes, func(replica, _ string) []string {
		if replica == "a" {
			return []string{http.MethodPatch}
		}
		return nil
	})

	// A policy removed (one b owned): a deletes its report, and touches no other.
	removed := scripts[len(scripts)-1]
	if err := os.Remove(filepath.Join(a.dir, removed)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the removed policy's report gone", func() bool {
		_, ok := readReport(t, dyn, ns, removed)
		return !ok && a.engine.AuditReportsCurrent()
	})
	wrote("policy removed", writes, func(replica, s string) []string {
		if replica == "a" && s == removed {
			return []string{http.MethodDelete}
		}
		return nil
	})
}

// TestAuditShardedNonOwnerDeletesNothing: a replica whose results do not hold a report (its
// version of the script watches another namespace, as during a rollout) neither deletes nor
// rewrites it when another replica owns the report's key.
func TestAuditShardedNonOwnerDeletesNothing(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	dyn := dynamic.NewForConfigOrDie(cp.Config)
	installReportCRDsOnly(t, dyn)
	ring := sharding.NewRing("a", "b")
	// Namespaces whose reports of the script a owns (the first) and b owns (the second).
	const script = "shardkeep.js"
	key := func(ns string) string { return audit.ReportKey(audit.ScriptLabelValue(script), ns) }
	var nsA, nsB string
	for nsA == "" || nsB == "" {
		ns := uniqueName("audit-keep")
		switch {
		case nsA == "" && ring.Owner(key(ns)) == "a":
			nsA = ns
		case nsB == "" && ring.Owner(key(ns)) == "b":
			nsB = ns
		}
	}
	deleteScriptReports(t, dyn, script)
	reqs := map[string]*reportRequests{"a": {}, "b": {}}
	a := startEngine(t, nil, tweaks(shardedAs(nsA, nsA, "a"), reqs["a"].counting))
	a.namespace(t, nsA)
	a.namespace(t, nsB)
	b := startEngine(t, nil, tweaks(shardedAs(nsA, nsA, "b"), reqs["b"].counting))
	defer func() {
		if t.Failed() {
			t.Logf("a's log:\n%s\nb's log:\n%s", a.log.dump(), b.log.dump())
		}
	}()
	waitRing(t, a, 2)
	waitRing(t, b, 2)
	a.create(t, configmapsGVR, configmap(nsA, "bad", nil, nil))
	a.create(t, configmapsGVR, configmap(nsB, "bad", nil, nil))

	a.write(t, script, teamAuditIn(nsA))
	waitFor(t, "a's report in "+nsA, func() bool {
		_, ok := readReport(t, dyn, nsA, script)
		return ok && a.engine.AuditReportsCurrent()
	})
	before, _ := readReport(t, dyn, nsA, script)
	// b's version watches nsB: it lists a's report in nsA, does not build it, and leaves it.
	b.write(t, script, teamAuditIn(nsB))
	waitFor(t, "b's report in "+nsB, func() bool {
		_, ok := readReport(t, dyn, nsB, script)
		return ok && b.engine.AuditReportsCurrent() && a.engine.AuditReportsCurrent()
	})
	if after, ok := readReport(t, dyn, nsA, script); !ok || after.rv != before.rv {
		t.Errorf("a's report in %s after b published: present %v, resourceVersion %s → %s; want it untouched", nsA, ok, before.rv, after.rv)
	}
	own := map[string]string{"a": reportPath(nsA, reportName(script)), "b": reportPath(nsB, reportName(script))}
	for id := range reqs {
		writes, _ := reqs[id].snapshot()
		want := map[string][]string{own[id]: {http.MethodPatch}}
		if !maps.EqualFunc(writes, want, slices.Equal) {
			t.Errorf("%s's report writes: %v, want %v (its own namespace's report, once)", id, writes, want)
		}
	}
}
