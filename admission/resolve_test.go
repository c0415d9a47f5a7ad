package admission

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jsinformer/jsinformer/scripting"
)

// TestServerAnswersForAScriptNotLoaded: a shared entry names a script this replica has not
// loaded. Its answer follows the failure policy the path carries: Fail denies naming it,
// Ignore allows with a warning; a path from before paths carried it takes the loaded
// scripts' policy. The name, which any caller may put in a path, makes no observation (no
// metric series, no decision record).
func TestServerAnswersForAScriptNotLoaded(t *testing.T) {
	t.Parallel()
	allow := scripting.Validation{Allowed: true}
	scripts := map[string]Script{"a.js": answers("a.js", "enforce", allow, nil), "i.js": answers("i.js", "ignore", allow, nil)}
	var observed atomic.Int32
	srv := httptest.NewServer(NewServer(Config{Lookup: func(name string) (Script, bool) { s, ok := scripts[name]; return s, ok },
		Observe: func(o Observation) {
			if o.Script == "gone.js" {
				t.Errorf("observed the script not loaded: %+v", o.Decision)
			}
			observed.Add(1)
		}}))
	t.Cleanup(srv.Close)
	body := review(t, "CREATE", "alice", configMap(nil))
	const notLoaded = "gone.js validate failed: the script is not loaded on this replica"
	for _, tc := range []struct {
		name, path string
		allowed    bool
		text       string // the denial's message, or a warning
	}{
		{"Fail denies", GroupPath("validate", "Fail", []string{"a.js", "gone.js"}), false, notLoaded},
		{"Ignore allows with a warning", GroupPath("validate", "Ignore", []string{"gone.js", "i.js"}), true, notLoaded + " (failurePolicy Ignore: allowed)"},
		{"an older path: the loaded scripts' Fail", "/validate-group/1/a.js/1/gone.js", false, notLoaded},
		{"an older path: the loaded scripts' Ignore", "/validate-group/1/gone.js/1/i.js", true, notLoaded + " (failurePolicy Ignore: allowed)"},
	} {
		code, _, b := post(t, srv.URL+tc.path, body)
		resp := decodeResponse(t, b)
		got := strings.Join(resp.Warnings, "; ")
		if resp.Result != nil {
			got = resp.Result.Message
		}
		if code != http.StatusOK || resp.Allowed != tc.allowed || got != tc.text {
			t.Errorf("%s: %d allowed %v %q, want allowed %v %q", tc.name, code, resp.Allowed, got, tc.allowed, tc.text)
		}
	}
	if n := observed.Load(); n != 4 {
		t.Errorf("%d observations, want the loaded scripts' 4", n)
	}
}

// TestGroupPathCarriesTheEntrysPolicy: the path the registrar writes for a shared entry is
// the one the server reads the policy from.
func TestGroupPathCarriesTheEntrysPolicy(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{"Fail", "Ignore"} {
		e := func(name string) Entry {
			return groupEntry(name, func(e *Entry) { e.Spec.FailurePolicy = policy })
		}
		groups := Groups([]Entry{e("a.js"), e("b.js")}, "validate")
		if len(groups) != 1 || groupPolicy(groups[0].Path()) != policy {
			t.Errorf("groups %+v: path policy %q, want one group with %s", groups, groupPolicy(groups[0].Path()), policy)
		}
	}
}
