package engine_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/inspection"
)

// reconcileScript is a script on the ConfigMaps of ns: module-level declarations state, then
// a definition with the given body. Reconcile workers each have their own runtime, so
// module-level state is per worker.
func reconcileScript(ns, state, body string) string {
	return fmt.Sprintf(`const ns = %q;
function busy(ms) { const end = Date.now() + ms; while (Date.now() < end) {} }
%s
export default {
  watch: { resource: "v1/configmaps", namespace: ns },
%s
};
`, ns, state, body)
}

// runsOf matches the reconcile runs of key by script.
func runsOf(script, key string) func(inspection.TraceRecord) bool {
	return call{Script: script, Event: "reconcile", Object: key, Handler: "reconcile"}.match
}

// gapsMs are the milliseconds between the starts of runs.
func gapsMs(runs []inspection.TraceRecord) []int64 {
	var gaps []int64
	for i := 1; i < len(runs); i++ {
		gaps = append(gaps, runs[i].Time.Sub(runs[i-1].Time).Milliseconds())
	}
	return gaps
}

// waitGaveUp waits until the queue view no longer holds key of script: a key that failed
// maxRetries+1 times is dropped.
func waitGaveUp(t *testing.T, r *runner, script, key string) {
	t.Helper()
	waitUntil(t, script+" giving up on "+key, time.Now().Add(30*time.Second), func() bool {
		q, err := r.engine.Queue(script)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range q.Scripts {
			if slices.ContainsFunc(s.Keys, func(k inspection.KeyState) bool { return k.Key == key }) {
				return false
			}
		}
		return true
	}, r)
}

func TestReconcileRetriesWithBackoffThenGivesUp(t *testing.T) {
	t.Parallel()
	ns := uniqueName("rec-retry")
	const maxRetries = 4
	r := startEngine(t, map[string]string{"retry.js": reconcileScript(ns, "", `  maxRetries: 4,
  reconcile(key) {
    throw new Error("always fails");
  },`)}, nil)
	r.namespace(t, ns)
	r.create(t, configmapsGVR, configmap(ns, "x", nil, nil))
	key := ns + "/x"
	last := func(rec inspection.TraceRecord) bool {
		return runsOf("retry.js", key)(rec) && rec.Attempt == maxRetries+1
	}
	r.calls.waitFor(t, "the last attempt", 1, last)
	waitGaveUp(t, r, "retry.js", key)
	attempts := r.calls.find(runsOf("retry.js", key))
	if len(attempts) != maxRetries+1 {
		t.Fatalf("attempts before giving up = %d, want maxRetries+1 = %d", len(attempts), maxRetries+1)
	}
	for i, a := range attempts {
		if a.Attempt != i+1 || a.Result != "error" || !strings.Contains(a.Error, "always fails") {
			t.Fatalf("run %d: attempt %d, result %s, error %q; want attempt %d failing", i+1, a.Attempt, a.Result, a.Error, i+1)
		}
	}
	// Exponential backoff: 5ms, 10ms, 20ms, 40ms between attempts, so the gaps grow.
	gaps := gapsMs(attempts)
	if gaps[len(gaps)-1] < 30 || gaps[len(gaps)-1] <= gaps[0] {
		t.Fatalf("gaps between attempts %v ms do not back off", gaps)
	}
	t.Logf("gaps between attempts: %v ms", gaps)
	// A new event starts afresh: the failure count was forgotten, and no stray retry of the
	// first round slipped in.
	r.patch(t, configmapsGVR, ns, "x", `{"data":{"again":"yes"}}`)
	r.calls.waitFor(t, "the last attempt again", 2, last)
	waitGaveUp(t, r, "retry.js", key)
	if got := r.calls.find(runsOf("retry.js", key)); len(got) != 2*(maxRetries+1) {
		t.Fatalf("attempts after two rounds = %d, want %d", len(got), 2*(maxRetries+1))
	}
}

func TestReconcileRequeueAfter(t *testing.T) {
	t.Parallel()
	ns := uniqueName("rec-requeue")
	r := startEngine(t, map[string]string{"requeue.js": reconcileScript(ns, "let runs = 0;", `  reconcile(key) {
    runs++;
    if (runs < 3) return { requeueAfter: "200ms" };
  },`)}, nil)
	r.namespace(t, ns)
	r.create(t, configmapsGVR, configmap(ns, "x", nil, nil))
	runs := r.calls.waitFor(t, "three runs", 3, runsOf("requeue.js", ns+"/x"))
	for i, gap := range gapsMs(runs[:3]) {
		if gap < 195 {
			t.Fatalf("run %d came %dms after the previous one, want >= 200ms", i+2, gap)
		}
	}
}

func TestReconcileKeyNeverRunsTwiceAtOnce(t *testing.T) {
	t.Parallel()
	ns := uniqueName("rec-exclusive")
	// Each run re-enqueues its own key while it is busy: with idle workers around, a broken
	// queue would hand the key to a second worker at once. A key's first run lasts until both
	// objects are cached, and 300 ms more, so the two keys' first runs overlap however slowly
	// a loaded machine delivers the second object.
	r := startEngine(t, map[string]string{"excl.js": reconcileScript(ns, "const runs = {};", `  concurrency: 3,
  reconcile(key, ctx) {
    log.info("start", { key });
    runs[key] = (runs[key] || 0) + 1;
    if (runs[key] <= 3) ctx.enqueue(key);
    const end = Date.now() + 4000;
    while (!(ctx.cache.get(ns, "a") && ctx.cache.get(ns, "b")) && Date.now() < end) {}
    busy(runs[key] === 1 ? 300 : 50);
    log.info("end", { key });
  },`)}, nil)
	r.namespace(t, ns)
	keys := []string{ns + "/a", ns + "/b"}
	r.create(t, configmapsGVR, configmap(ns, "a", nil, nil))
	r.create(t, configmapsGVR, configmap(ns, "b", nil, nil))
	for _, k := range keys {
		r.calls.waitFor(t, "4 runs of "+k, 4, call{Script: "excl.js", Event: "reconcile", Object: k, Result: "ok"}.match)
	}
	r.calls.complete(t)
	// The starts and ends every run logged, in the order they were logged.
	running := map[string]bool{}
	overlapped := false
	for _, l := range linesOf(r.calls.find(call{Script: "excl.js", Event: "reconcile"}.match)) {
		k := lineAttr(l, "key")
		if running[k] == (l.Message == "start") {
			t.Fatalf("%s of %s while running=%v: one key reconciled twice at once\n%s", l.Message, k, running[k], r.calls.dump())
		}
		running[k] = l.Message == "start"
		overlapped = overlapped || (running[keys[0]] && running[keys[1]])
	}
	if !overlapped {
		t.Fatalf("different keys never ran in parallel with concurrency 3\n%s", r.calls.dump())
	}
}

func TestReconcileBurstCollapses(t *testing.T) {
	t.Parallel()
	ns := uniqueName("rec-burst")
	const updates = 30
	// A reconcile lasts until the cache holds the burst's last state (or 4 s, under the
	// handler timeout): every event of the burst arrives while one runs, however long the
	// burst takes to send on a loaded machine, so what is counted is the workqueue's
	// collapsing, not the race between patches and reconciles.
	r := startEngine(t, map[string]string{"burst.js": reconcileScript(ns, "", fmt.Sprintf(`  reconcile(key, ctx) {
    const [namespace, name] = key.split("/");
    const end = Date.now() + 4000;
    let cm = ctx.cache.get(namespace, name);
    while (cm && cm.data.n !== "%d" && Date.now() < end) cm = ctx.cache.get(namespace, name);
    log.info("reconciled", { key, n: cm ? cm.data.n : "gone" });
  },`, updates))}, nil)
	r.namespace(t, ns)
	r.create(t, configmapsGVR, configmap(ns, "x", nil, map[string]any{"n": "0"}))
	// The burst is sent concurrently so it lands within a few reconciles even on a loaded
	// machine, where 30 patches one after another can take longer than 30 reconciles; the last
	// one is sent alone so its value is the final state.
	var burst sync.WaitGroup
	for i := 1; i < updates; i++ {
		burst.Go(func() {
			if err := r.tryPatch(t, configmapsGVR, ns, "x", fmt.Sprintf(`{"data":{"n":"%d"}}`, i)); err != nil {
				t.Error(err)
			}
		})
	}
	burst.Wait()
	if t.Failed() {
		return
	}
	r.patch(t, configmapsGVR, ns, "x", fmt.Sprintf(`{"data":{"n":"%d"}}`, updates))
	r.calls.waitFor(t, "the last state reconciled", 1, call{Script: "burst.js", Event: "reconcile", Object: ns + "/x", Result: "ok",
		Logged: "reconciled", Attrs: map[string]string{"n": strconv.Itoa(updates)}}.match)
	r.calls.complete(t)
	got := len(r.calls.find(runsOf("burst.js", ns+"/x")))
	// One run waits out the burst, the key queued meanwhile runs once more, and its event may
	// reach the queue after that run has started (a third); more than 5 means events were run
	// one by one while a run of the same key was waiting.
	if got > 5 {
		t.Fatalf("%d reconciles for %d events; want them collapsed into far fewer", got, updates+1)
	}
	t.Logf("%d events collapsed into %d reconciles", updates+1, got)
}

func TestEnqueueFromHandlerTriggersReconcile(t *testing.T) {
	t.Parallel()
	ns := uniqueName("rec-enqueue")
	r := startEngine(t, map[string]string{"enq.js": reconcileScript(ns, "", `  onUpdate(oldCM, cm, ctx) { ctx.enqueue(ns + "/" + cm.data.target); },
  reconcile(key) {},`)}, nil)
	r.namespace(t, ns)
	r.create(t, configmapsGVR, configmap(ns, "src", nil, map[string]any{"target": "none"}))
	r.patch(t, configmapsGVR, ns, "src", `{"data":{"target":"virtual"}}`)
	// No object is called "virtual": only ctx.enqueue can have queued that key.
	r.calls.waitFor(t, "reconcile of the enqueued key", 1, call{Script: "enq.js", Event: "reconcile", Object: ns + "/virtual", Result: "ok"}.match)
}

func TestReloadNeverReconcilesOneKeyInTwoVersionsAtOnce(t *testing.T) {
	t.Parallel()
	ns := uniqueName("reconcile-reload")
	script := func(v string) string {
		return reconcileScript(ns, "", fmt.Sprintf(`  reconcile(key) {
    log.info("start", { v: %q });
    busy(300);
    log.info("end", { v: %q });
  },`, v, v))
	}
	r := startEngine(t, map[string]string{"a.js": script("v1")}, nil)
	r.namespace(t, ns)
	r.create(t, configmapsGVR, configmap(ns, "x", nil, nil))
	waitRunning(t, r.engine, "a.js", hashOf(script("v1")), ns+"/x")
	r.write(t, "a.js", script("v2"))
	r.calls.waitFor(t, "v2 reconciled", 1, call{Script: "a.js", Version: hashOf(script("v2")), Event: "reconcile", Result: "ok"}.match)
	var order []string
	for _, l := range linesOf(r.calls.find(call{Script: "a.js", Event: "reconcile"}.match)) {
		order = append(order, l.Message+" "+lineAttr(l, "v"))
	}
	want := []string{"start v1", "end v1", "start v2", "end v2"}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Fatalf("reconcile order %v, want %v: the old version's reconcile must finish before the new one starts", order, want)
	}
}
