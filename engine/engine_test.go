package engine_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/status"
)

// watchScript is a script on configmaps of one namespace with the given body.
func watchScript(ns, body string) string {
	return fmt.Sprintf("export default {\n  watch: { resource: \"configmaps\", namespace: %q },\n%s\n};\n", ns, body)
}

func TestInitialListArrivesAsAdds(t *testing.T) {
	t.Parallel()
	pre := startEngine(t, nil, func(c *engine.Config) { c.Resources = []string{"ns"} })
	ns := pre.namespace(t, uniqueName("initial"))
	for i := range 3 {
		pre.create(t, configmapsGVR, configmap(ns, "c"+strconv.Itoa(i), nil, nil))
	}
	r := startEngine(t, map[string]string{"a.js": watchScript(ns, `
  onAdd(cm, ctx) { log.info("add", { name: cm.metadata.name, initial: ctx.isInInitialList }); },`)}, nil)
	// Ready means every informer synced and the initial adds were handled.
	if got := r.calls.find(call{Script: "a.js", Event: "add", Handler: "onAdd", Result: "ok", Initial: initial(true)}.match); len(got) != 3 {
		t.Fatalf("initial adds at ready = %d, want 3\n%s", len(got), r.calls.dump())
	}
	r.create(t, configmapsGVR, configmap(ns, "later", nil, nil))
	r.calls.waitFor(t, "live add", 1, call{Script: "a.js", Event: "add", Object: ns + "/later", Result: "ok", Initial: initial(false)}.match)
}

func TestTwoScriptsShareOneWatch(t *testing.T) {
	t.Parallel()
	ns := uniqueName("share")
	var watches atomic.Int64
	body := `  onAdd(cm) { log.info("seen", { name: cm.metadata.name }); },`
	r := startEngine(t, map[string]string{
		"a.js": watchScript(ns, body),
		"b.js": watchScript(ns, body),
	}, func(c *engine.Config) {
		c.RESTConfig = rest.CopyConfig(c.RESTConfig)
		c.RESTConfig.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(req *http.Request) (*http.Response, error) {
				if req.URL.Query().Get("watch") == "true" && strings.HasSuffix(req.URL.Path, "/namespaces/"+ns+"/configmaps") {
					watches.Add(1)
				}
				return rt.RoundTrip(req)
			})
		})
	})
	r.namespace(t, ns)
	r.create(t, configmapsGVR, configmap(ns, "x", nil, nil))
	for _, script := range []string{"a.js", "b.js"} {
		r.calls.waitFor(t, script+" sees x", 1, call{Script: script, Event: "add", Object: ns + "/x", Handler: "onAdd", Result: "ok"}.match)
	}
	if got := watches.Load(); got != 1 {
		t.Fatalf("watch requests for share/configmaps = %d, want 1 shared by two scripts", got)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestThrowIsLoggedWithPositionAndOthersContinue(t *testing.T) {
	t.Parallel()
	ns := uniqueName("throws")
	r := startEngine(t, map[string]string{
		"bad.js": watchScript(ns, `  onAdd(cm) {
    throw new Error("boom " + cm.metadata.name);
  },`),
		"good.js": watchScript(ns, `  onAdd(cm) { log.info("good", { name: cm.metadata.name }); },`),
	}, nil)
	r.namespace(t, ns)
	r.create(t, configmapsGVR, configmap(ns, "one", nil, nil))
	r.create(t, configmapsGVR, configmap(ns, "two", nil, nil))
	for _, name := range []string{"one", "two"} {
		r.calls.waitFor(t, "good sees "+name, 1, call{Script: "good.js", Object: ns + "/" + name, Handler: "onAdd", Result: "ok"}.match)
	}
	fails := r.log.waitFor(t, "two failures", 2, msg("script handler failed", "script", "bad.js"))
	if e := fails[0].attrs["error"]; !strings.Contains(e, "bad.js:4:") || !strings.Contains(e, "boom one") {
		t.Fatalf("error %q lacks bad.js:4:col and the message", e)
	}
	if !strings.Contains(fails[0].attrs["stack"], "bad.js:4") {
		t.Fatalf("stack %q lacks the throw site", fails[0].attrs["stack"])
	}
}

func TestEndlessLoopIsInterrupted(t *testing.T) {
	t.Parallel()
	ns := uniqueName("loops")
	r := startEngine(t, map[string]string{
		"loop.js": watchScript(ns, `  onAdd(cm) {
    if (cm.metadata.name === "spin") { while (true) {} }
    log.info("after", { name: cm.metadata.name });
  },`),
	}, nil)
	r.namespace(t, ns)
	r.create(t, configmapsGVR, configmap(ns, "spin", nil, nil))
	r.create(t, configmapsGVR, configmap(ns, "next", nil, nil))
	waitScript(t, r.engine, "loop.js", "the endless call timed out", func(s status.ScriptStatus) bool {
		return s.Handlers["onAdd"].Timeouts == 1
	})
	r.calls.waitFor(t, "the next event still handled", 1, call{Script: "loop.js", Object: ns + "/next", Handler: "onAdd", Result: "ok"}.match)
}

func TestObjectsAreReadOnly(t *testing.T) {
	t.Parallel()
	ns := uniqueName("readonly")
	r := startEngine(t, map[string]string{
		"writer.js": watchScript(ns, `  onAdd(cm) {
    try { cm.metadata.labels.team = "hacked"; log.info("write allowed"); }
    catch (e) { log.info("write refused", { type: e.name }); }
    try { delete cm.metadata.labels.team; log.info("delete allowed"); }
    catch (e) { log.info("delete refused", { type: e.name }); }
  },`),
		"reader.js": watchScript(ns, `  onUpdate(o, cm) { log.info("reader", { team: cm.metadata.labels.team, v: cm.data.v }); },`),
	}, nil)
	r.namespace(t, ns)
	r.create(t, configmapsGVR, configmap(ns, "x", map[string]any{"team": "web"}, map[string]any{"v": "1"}))
	add := r.calls.waitFor(t, "writer's add", 1, call{Script: "writer.js", Object: ns + "/x", Handler: "onAdd", Result: "ok"}.match)[0]
	for _, refused := range []string{"write refused", "delete refused"} {
		if got := logAttr(add, refused, "type"); got != "TypeError" {
			t.Fatalf("%s: error type %q, want TypeError; the call: %s", refused, got, recordString(add))
		}
	}
	r.patch(t, configmapsGVR, ns, "x", `{"data":{"v":"2"}}`)
	r.calls.waitFor(t, "reader sees the original label", 1, call{Script: "reader.js", Handler: "onUpdate",
		Logged: "reader", Attrs: map[string]string{"team": "web", "v": "2"}}.match)
}

func TestEventsForOneObjectArriveInOrder(t *testing.T) {
	t.Parallel()
	ns := uniqueName("order")
	r := startEngine(t, map[string]string{
		"order.js": watchScript(ns, `  onUpdate(o, cm) { log.info("seq", { n: cm.data.n }); },`),
	}, nil)
	r.namespace(t, ns)
	r.create(t, configmapsGVR, configmap(ns, "x", nil, map[string]any{"n": "0"}))
	const updates = 40
	for i := 1; i <= updates; i++ {
		r.patch(t, configmapsGVR, ns, "x", fmt.Sprintf(`{"data":{"n":"%d"}}`, i))
	}
	r.calls.waitFor(t, "last update", 1, call{Script: "order.js", Logged: "seq", Attrs: map[string]string{"n": strconv.Itoa(updates)}}.match)
	r.calls.complete(t)
	var seen []int
	for _, rec := range r.calls.find(call{Script: "order.js", Handler: "onUpdate"}.match) {
		n, _ := strconv.Atoi(logAttr(rec, "seq", "n"))
		seen = append(seen, n)
	}
	if !slices.IsSorted(seen) || len(seen) != updates {
		t.Fatalf("updates seen out of order or lost: %v", seen)
	}
}
