package admission

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/scripting"
)

// fakeScript answers with Go functions: quick unit tests of the fan-out (the integration
// test runs real scripts).
type fakeScript struct {
	name     string
	spec     scripting.AdmissionSpec
	validate func(context.Context, scripting.AdmissionRequest) (scripting.Validation, error)
	mutate   func(context.Context, scripting.AdmissionRequest) (scripting.Object, error)
	calls    atomic.Int32
}

func (f *fakeScript) Name() string                  { return f.name }
func (f *fakeScript) Spec() scripting.AdmissionSpec { return f.spec }
func (f *fakeScript) Defines(kind string) bool {
	return (kind == "validate" && f.validate != nil) || (kind == "mutate" && f.mutate != nil)
}

func (f *fakeScript) Validate(ctx context.Context, req scripting.AdmissionRequest) (scripting.Validation, error) {
	f.calls.Add(1)
	return f.validate(ctx, req)
}

func (f *fakeScript) Mutate(ctx context.Context, req scripting.AdmissionRequest) (scripting.Object, error) {
	f.calls.Add(1)
	return f.mutate(ctx, req)
}

var enforce = scripting.AdmissionSpec{Operations: []string{"CREATE"}, FailurePolicy: "Fail", TimeoutSeconds: 5, Mode: "enforce"}

func answers(name, mode string, v scripting.Validation, err error) *fakeScript {
	spec := enforce
	spec.Mode = mode
	if strings.HasPrefix(mode, "ignore") {
		spec.Mode, spec.FailurePolicy = "enforce", "Ignore"
	}
	return &fakeScript{name: name, spec: spec, validate: func(context.Context, scripting.AdmissionRequest) (scripting.Validation, error) { return v, err }}
}

func TestValidateAllMergesTheDecisions(t *testing.T) {
	t.Parallel()
	allow := scripting.Validation{Allowed: true}
	deny := func(msg string, code int) scripting.Validation { return scripting.Validation{Message: msg, Code: code} }
	warn := func(w string) scripting.Validation { return scripting.Validation{Allowed: true, Warnings: []string{w}} }
	tests := []struct {
		name     string
		scripts  []*fakeScript
		allowed  bool
		code     int32
		message  string
		warnings []string
		outcomes []string
	}{
		{"all allow, two warn: allowed with both warnings in order",
			[]*fakeScript{answers("a.js", "enforce", warn("from a"), nil), answers("b.js", "enforce", allow, nil), answers("c.js", "enforce", warn("from c"), nil)},
			true, 0, "", []string{"from a", "from c"}, []string{OutcomeWarned, OutcomeAllowed, OutcomeWarned}},
		{"the second denies: its message, named",
			[]*fakeScript{answers("a.js", "enforce", warn("from a"), nil), answers("b.js", "enforce", deny("needs a team", 0), nil), answers("c.js", "enforce", allow, nil)},
			false, 403, "b.js: needs a team", []string{"from a"}, []string{OutcomeWarned, OutcomeDenied, OutcomeAllowed}},
		{"two deny: the first's code, both named",
			[]*fakeScript{answers("a.js", "enforce", allow, nil), answers("b.js", "enforce", deny("no b", 422), nil), answers("c.js", "enforce", deny("no c", 0), nil)},
			false, 422, "b.js: no b; c.js: no c", nil, []string{OutcomeAllowed, OutcomeDenied, OutcomeDenied}},
		{"audit and warn modes do not deny",
			[]*fakeScript{answers("a.js", "audit", deny("would not", 0), nil), answers("b.js", "warn", deny("careful", 0), nil), answers("c.js", "enforce", allow, nil)},
			true, 0, "", []string{"b.js would deny this request: careful"}, []string{OutcomeAudited, OutcomeWarned, OutcomeAllowed}},
		{"an audited denial beside an enforced one",
			[]*fakeScript{answers("a.js", "audit", deny("would not", 0), nil), answers("b.js", "enforce", deny("will not", 0), nil)},
			false, 403, "b.js: will not", nil, []string{OutcomeAudited, OutcomeDenied}},
		{"a failing script under Fail denies, under Ignore warns",
			[]*fakeScript{answers("a.js", "ignore", allow, errors.New("boom a")), answers("b.js", "enforce", allow, errors.New("boom b"))},
			false, 500, "b.js validate failed: boom b", []string{"a.js validate failed: boom a (failurePolicy Ignore: allowed)"}, []string{OutcomeErrored, OutcomeErrored}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			scripts := make([]Script, len(tt.scripts))
			for i, s := range tt.scripts {
				scripts[i] = s
			}
			d, each := ValidateAll(t.Context(), scripts, scripting.AdmissionRequest{Operation: "CREATE", Object: configMap(nil)})
			if d.Allowed != tt.allowed || d.Code != tt.code || d.Message != tt.message || !slices.Equal(d.Warnings, tt.warnings) {
				t.Errorf("merged = allowed %v code %d message %q warnings %q, want %v %d %q %q", d.Allowed, d.Code, d.Message, d.Warnings,
					tt.allowed, tt.code, tt.message, tt.warnings)
			}
			var outcomes []string
			for _, e := range each {
				outcomes = append(outcomes, e.Outcome)
			}
			if !slices.Equal(outcomes, tt.outcomes) {
				t.Errorf("each script's outcome %q, want %q", outcomes, tt.outcomes)
			}
		})
	}
}

// TestValidateAllRunsTheScriptsConcurrently: each validate waits until all have started;
// called one after another, the first would wait until its deadline.
func TestValidateAllRunsTheScriptsConcurrently(t *testing.T) {
	t.Parallel()
	const n = 4
	var started sync.WaitGroup
	started.Add(n)
	all := make(chan struct{})
	go func() { started.Wait(); close(all) }() // ends once every script has started
	scripts := make([]Script, n)
	for i := range scripts {
		scripts[i] = &fakeScript{name: "s.js", spec: enforce, validate: func(ctx context.Context, _ scripting.AdmissionRequest) (scripting.Validation, error) {
			started.Done()
			select {
			case <-all:
				return scripting.Validation{Allowed: true}, nil
			case <-ctx.Done():
				return scripting.Validation{}, ctx.Err()
			}
		}}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	d, _ := ValidateAll(ctx, scripts, scripting.AdmissionRequest{Operation: "CREATE", Object: configMap(nil)})
	if !d.Allowed || d.Outcome != OutcomeAllowed {
		t.Errorf("merged %+v: the scripts did not all run at once", d)
	}
	select {
	case <-all:
	default:
		t.Fatal("not every script started") // the helper goroutine would be left waiting
	}
}

func TestValidateAllAnswersAPanicByTheFailurePolicy(t *testing.T) {
	t.Parallel()
	panics := &fakeScript{name: "p.js", spec: enforce, validate: func(context.Context, scripting.AdmissionRequest) (scripting.Validation, error) {
		panic("bad fake")
	}}
	d, each := ValidateAll(t.Context(), []Script{answers("a.js", "enforce", scripting.Validation{Allowed: true}, nil), panics},
		scripting.AdmissionRequest{Operation: "CREATE", Object: configMap(nil)})
	if d.Allowed || d.Code != 500 || !strings.Contains(d.Message, "p.js validate failed: panic: bad fake") || each[1].Outcome != OutcomeErrored {
		t.Errorf("merged %+v, each %+v: want p.js's panic denied by failurePolicy Fail", d, each)
	}
}

// labeller is a mutate adding label key, its value what value makes of the labels it sees.
func labeller(name, key string, value func(labels map[string]any) string) *fakeScript {
	return &fakeScript{name: name, spec: enforce, mutate: func(_ context.Context, req scripting.AdmissionRequest) (scripting.Object, error) {
		out := cloneJSON(req.Object)
		meta := out["metadata"].(map[string]any)
		labels, _ := meta["labels"].(map[string]any)
		next := map[string]any{}
		maps.Copy(next, labels)
		next[key] = value(labels)
		meta["labels"] = next
		return out, nil
	}}
}

func cloneJSON(o scripting.Object) scripting.Object {
	b, _ := json.Marshal(o)
	var out scripting.Object
	_ = json.Unmarshal(b, &out)
	return out
}

func failing(name, policy string, err error) *fakeScript {
	spec := enforce
	spec.FailurePolicy = policy
	return &fakeScript{name: name, spec: spec, mutate: func(context.Context, scripting.AdmissionRequest) (scripting.Object, error) { return nil, err }}
}

func renaming(name string) *fakeScript {
	spec := enforce
	spec.FailurePolicy = "Ignore"
	return &fakeScript{name: name, spec: spec, mutate: func(_ context.Context, req scripting.AdmissionRequest) (scripting.Object, error) {
		out := cloneJSON(req.Object)
		out["metadata"].(map[string]any)["name"] = "other"
		return out, nil
	}}
}

func TestMutateAllChainsTheScripts(t *testing.T) {
	t.Parallel()
	first := func(map[string]any) string { return "1" }
	seen := func(labels map[string]any) string { v, _ := labels["first"].(string); return "saw-" + v }
	tests := []struct {
		name      string
		scripts   []*fakeScript
		allowed   bool
		patch     string
		each      []string // each script's own patch
		warnings  int
		notCalled string
	}{
		{"the second sees the first's label", []*fakeScript{labeller("a.js", "first", first), labeller("b.js", "second", seen)},
			true, `[{"op":"add","path":"/metadata/labels/first","value":"1"},{"op":"add","path":"/metadata/labels/second","value":"saw-1"}]`,
			[]string{`[{"op":"add","path":"/metadata/labels/first","value":"1"}]`, `[{"op":"add","path":"/metadata/labels/second","value":"saw-1"}]`}, 0, ""},
		{"a failing mutate under Ignore: the others apply", []*fakeScript{labeller("a.js", "first", first), failing("b.js", "Ignore", errors.New("boom")), labeller("c.js", "second", seen)},
			true, `[{"op":"add","path":"/metadata/labels/first","value":"1"},{"op":"add","path":"/metadata/labels/second","value":"saw-1"}]`,
			[]string{`[{"op":"add","path":"/metadata/labels/first","value":"1"}]`, ``, `[{"op":"add","path":"/metadata/labels/second","value":"saw-1"}]`}, 1, ""},
		{"a protected field under Ignore: not applied, the others are", []*fakeScript{renaming("a.js"), labeller("b.js", "second", seen)},
			true, `[{"op":"add","path":"/metadata/labels/second","value":"saw-"}]`,
			[]string{``, `[{"op":"add","path":"/metadata/labels/second","value":"saw-"}]`}, 1, ""},
		{"a failing mutate under Fail denies; the next is not asked", []*fakeScript{labeller("a.js", "first", first), failing("b.js", "Fail", errors.New("boom")), labeller("c.js", "second", seen)},
			false, ``, []string{`[{"op":"add","path":"/metadata/labels/first","value":"1"}]`, ``}, 0, "c.js"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			scripts := make([]Script, len(tt.scripts))
			for i, s := range tt.scripts {
				scripts[i] = s
			}
			obj := configMap(map[string]any{"app": "web"})
			d, each := MutateAll(t.Context(), scripts, scripting.AdmissionRequest{Operation: "CREATE", Object: obj})
			if d.Allowed != tt.allowed || !samePatch(t, d.Patch, tt.patch) || len(d.Warnings) != tt.warnings {
				t.Errorf("merged = allowed %v patch %s warnings %q, want %v %s and %d warnings", d.Allowed, d.Patch, d.Warnings, tt.allowed, tt.patch, tt.warnings)
			}
			var patches []string
			for _, e := range each {
				patches = append(patches, string(e.Patch))
			}
			if !slices.Equal(patches, tt.each) {
				t.Errorf("each script's patch %q, want %q", patches, tt.each)
			}
			if !tt.allowed && !strings.HasPrefix(d.Message, "b.js mutate failed: boom") {
				t.Errorf("denial message %q, want b.js's failure", d.Message)
			}
			for _, s := range tt.scripts {
				if s.name == tt.notCalled && s.calls.Load() != 0 {
					t.Errorf("%s was asked after the denial", s.name)
				}
			}
			if obj["metadata"].(map[string]any)["labels"].(map[string]any)["first"] != nil {
				t.Error("the request's object was changed")
			}
		})
	}
}

// TestServerFansAGroupPathOut: each script's decision is observed on its own, a script not
// loaded answers by the path's failure policy (TestServerAnswersForAScriptNotLoaded), 404
// only when none is loaded, and the budget covers the whole chain.
func TestServerFansAGroupPathOut(t *testing.T) {
	t.Parallel()
	slow := func(name string) *fakeScript {
		s := labeller(name, name[:1], func(map[string]any) string { return "x" })
		inner := s.mutate
		s.mutate = func(ctx context.Context, req scripting.AdmissionRequest) (scripting.Object, error) {
			select {
			case <-time.After(600 * time.Millisecond):
				return inner(ctx, req)
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return s
	}
	scripts := map[string]Script{
		"a.js":      answers("a.js", "enforce", scripting.Validation{Allowed: true, Warnings: []string{"wa"}}, nil),
		"team/b.js": answers("team/b.js", "enforce", scripting.Validation{Message: "no"}, nil),
		"s1.js":     slow("s1.js"), "s2.js": slow("s2.js"),
	}
	var mu sync.Mutex
	var observed []string
	srv := httptest.NewServer(NewServer(Config{Lookup: func(name string) (Script, bool) { s, ok := scripts[name]; return s, ok },
		Observe: func(o Observation) {
			mu.Lock()
			defer mu.Unlock()
			observed = append(observed, o.Script+" "+o.Kind+" "+o.Decision.Outcome)
		}}))
	t.Cleanup(srv.Close)
	body := review(t, "CREATE", "alice", configMap(nil))

	code, _, b := post(t, srv.URL+GroupPath("validate", "Ignore", []string{"a.js", "gone.js", "team/b.js"}), body)
	resp := decodeResponse(t, b)
	gone := "gone.js validate failed: the script is not loaded on this replica (failurePolicy Ignore: allowed)"
	if code != http.StatusOK || resp.Allowed || resp.Result.Message != "team/b.js: no" || !slices.Equal(resp.Warnings, []string{"wa", gone}) {
		t.Errorf("group answer %d %+v", code, resp)
	}
	_, _, b = post(t, srv.URL+GroupPath("validate", "Ignore", []string{"gone.js", "team/b.js"}), body)
	if resp := decodeResponse(t, b); resp.Allowed || resp.Result.Message != "team/b.js: no" {
		t.Errorf("a shared entry with one script loaded: %+v, want its denial named", resp)
	}
	if code, _, _ := post(t, srv.URL+GroupPath("validate", "Fail", []string{"gone.js", "s1.js"}), body); code != http.StatusNotFound {
		t.Errorf("a path naming no loaded script of its kind: %d, want 404", code)
	}
	start := time.Now()
	_, _, b = post(t, srv.URL+GroupPath("mutate", "Fail", []string{"s1.js", "s2.js"})+"?timeout=1s", body)
	// 90% of the second is the chain's: s2.js is cut and, under failurePolicy Fail, denies.
	if took, resp := time.Since(start), decodeResponse(t, b); took > 950*time.Millisecond || resp.Allowed ||
		!strings.HasPrefix(resp.Result.Message, "s2.js mutate failed: ") {
		t.Errorf("a chain of two 600ms mutates within ?timeout=1s took %v: %+v", took, resp)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"a.js validate warned", "team/b.js validate denied", "team/b.js validate denied", "s1.js mutate allowed", "s2.js mutate errored"}
	if !slices.Equal(observed, want) {
		t.Errorf("observed %q, want %q", observed, want)
	}
}
