package admission

import (
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/scripting"
)

// budgetScript is a real script sharing an entry with timeoutSeconds 1: its runtime's
// timeout is what the engine gives it (AdmissionSpec.CallLimits).
func budgetScript(t *testing.T, name, mutate string) namedScript {
	t.Helper()
	src := `export default { mutate(obj) { ` + mutate + ` }, admission: { failurePolicy: "Ignore", timeoutSeconds: 1 } }`
	timeout, _ := scripting.AdmissionSpec{TimeoutSeconds: 1}.CallLimits(0)
	return namedScript{realScript: newRealScriptTimeout(t, src, timeout), name: name}
}

// TestSharedEntryAnswersWithinTimeoutSeconds: four mutations share an entry of
// timeoutSeconds 1; the first labels, the next two spin. The answer comes within the
// second with the first's label: b.js times out, c.js is cut at the request's deadline, and
// d.js, whose turn comes after it, is not started; under failurePolicy Ignore each allows
// with a warning. Each runtime's own timeout (600 ms) would have taken 1.2 s and more.
func TestSharedEntryAnswersWithinTimeoutSeconds(t *testing.T) {
	t.Parallel()
	label := `const o = util.clone(obj); o.metadata.labels = { NAME: "yes" }; return o;`
	scripts := map[string]Script{
		"a.js": budgetScript(t, "a.js", strings.ReplaceAll(label, "NAME", "a")),
		"b.js": budgetScript(t, "b.js", `for (;;) {}`),
		"c.js": budgetScript(t, "c.js", `for (;;) {}`),
		"d.js": budgetScript(t, "d.js", strings.ReplaceAll(label, "NAME", "d")),
	}
	var mu sync.Mutex
	errs := map[string]string{}
	srv := httptest.NewServer(NewServer(Config{Lookup: func(name string) (Script, bool) { s, ok := scripts[name]; return s, ok },
		Observe: func(o Observation) {
			mu.Lock()
			defer mu.Unlock()
			errs[o.Script] = o.Decision.Message
		}}))
	t.Cleanup(srv.Close)
	start := time.Now()
	_, _, b := post(t, srv.URL+GroupPath("mutate", "Ignore", []string{"a.js", "b.js", "c.js", "d.js"}), review(t, "CREATE", "alice", configMap(nil)))
	took := time.Since(start)
	t.Logf("answered in %s", took)
	resp := decodeResponse(t, b)
	if took >= time.Second {
		t.Errorf("answered after %s, past the entry's timeoutSeconds 1", took)
	}
	if !resp.Allowed || !samePatch(t, resp.Patch, `[{"op":"replace","path":"/metadata/labels","value":{"a":"yes"}}]`) {
		t.Errorf("answer allowed %v with patch %s, want a.js's label alone", resp.Allowed, resp.Patch)
	}
	mu.Lock()
	defer mu.Unlock()
	for script, want := range map[string]string{
		"b.js": "mutate timed out after 600ms", "c.js": "at the admission request's deadline",
		"d.js": "d.js mutate failed: not started: the request's time ran out",
	} {
		if !strings.Contains(errs[script], want) {
			t.Errorf("%s: %q, want it to contain %q", script, errs[script], want)
		}
	}
	if len(resp.Warnings) != 3 {
		t.Errorf("warnings %q, want b.js's, c.js's and d.js's failures", resp.Warnings)
	}
}
