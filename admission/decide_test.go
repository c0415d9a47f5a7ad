package admission

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/jsinformer/jsinformer/scripting"
)

// realScript serves a compiled script's admission functions on one runtime, one call at a
// time, as the engine's versions do on their pools.
type realScript struct {
	mu sync.Mutex
	s  *scripting.Script
}

// newRealScript compiles src with a call timeout of 2 s: the module's evaluation runs under
// it too, and under a loaded CI machine's -race 200 ms was once not enough for it.
func newRealScript(t *testing.T, src string) *realScript {
	t.Helper()
	return newRealScriptTimeout(t, src, 2*time.Second)
}

func newRealScriptTimeout(t *testing.T, src string, timeout time.Duration) *realScript {
	t.Helper()
	p, err := scripting.Compile("policy.js", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Instantiate(scripting.Options{Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return &realScript{s: s}
}

func (r *realScript) Name() string { return "policy.js" }
func (r *realScript) Defines(kind string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	def := r.s.Definition()
	return (kind == "validate" && def.Validate) || (kind == "mutate" && def.Mutate)
}
func (r *realScript) Spec() scripting.AdmissionSpec {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.s.Definition().Admission
}

// Validate and Mutate end by ctx's deadline, as the engine's versions do.
func (r *realScript) Validate(ctx context.Context, req scripting.AdmissionRequest) (scripting.Validation, error) {
	req.Deadline, _ = ctx.Deadline()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.s.Validate(req)
}

func (r *realScript) Mutate(ctx context.Context, req scripting.AdmissionRequest) (scripting.Object, error) {
	req.Deadline, _ = ctx.Deadline()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.s.Mutate(req)
}

func configMap(labels map[string]any) scripting.Object {
	return scripting.Object{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c", "namespace": "default", "uid": "u1", "labels": labels},
		"data":     map[string]any{"k": "v"}}
}

const teamPolicy = `export default {
  validate(obj) {
    if (obj.metadata.labels.throw) throw new Error("boom");
    if (!obj.metadata.labels.team) return { allowed: false, message: "a team label is required", warnings: ["w"] };
    if (obj.metadata.labels.team === "old") return { allowed: true, warnings: ["team old is deprecated"] };
  },
  admission: { mode: MODE, failurePolicy: POLICY },
};`

func TestValidateDecision(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, mode, policy string
		labels             map[string]any
		want               Decision
		wantWarning        string
	}{
		{"allowed", "enforce", "Fail", map[string]any{"team": "a"}, Decision{Allowed: true, Outcome: OutcomeAllowed}, ""},
		{"allowed with warnings", "enforce", "Fail", map[string]any{"team": "old"}, Decision{Allowed: true, Outcome: OutcomeWarned}, "team old is deprecated"},
		{"denied", "enforce", "Fail", map[string]any{}, Decision{Allowed: false, Code: 403, Message: "a team label is required", Outcome: OutcomeDenied}, "w"},
		{"warn mode", "warn", "Fail", map[string]any{}, Decision{Allowed: true, Code: 403, Message: "a team label is required", Outcome: OutcomeWarned},
			"policy.js would deny this request: a team label is required"},
		{"audit mode", "audit", "Fail", map[string]any{}, Decision{Allowed: true, Code: 403, Message: "a team label is required", Outcome: OutcomeAudited}, ""},
		{"throw, Fail", "enforce", "Fail", map[string]any{"throw": "1"}, Decision{Allowed: false, Code: 500,
			Message: "policy.js validate failed: policy.js:3:42: Error: boom", Outcome: OutcomeErrored}, ""},
		{"throw, Ignore", "enforce", "Ignore", map[string]any{"throw": "1"}, Decision{Allowed: true,
			Message: "policy.js validate failed: policy.js:3:42: Error: boom", Outcome: OutcomeErrored},
			"policy.js validate failed: policy.js:3:42: Error: boom (failurePolicy Ignore: allowed)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := strings.NewReplacer("MODE", `"`+tc.mode+`"`, "POLICY", `"`+tc.policy+`"`).Replace(teamPolicy)
			d := Validate(t.Context(), newRealScript(t, src), scripting.AdmissionRequest{Operation: "CREATE", Object: configMap(tc.labels)})
			if d.Allowed != tc.want.Allowed || d.Code != tc.want.Code || !strings.HasPrefix(d.Message, tc.want.Message) ||
				d.Outcome != tc.want.Outcome || (tc.want.Message == "" && d.Message != "") {
				t.Errorf("decision = %+v\nwant       %+v", d, tc.want)
			}
			if got := strings.Join(d.Warnings, "|"); (tc.wantWarning == "") != (got == "") || !strings.Contains(got, tc.wantWarning) {
				t.Errorf("warnings = %q, want %q", got, tc.wantWarning)
			}
			if (tc.want.Outcome == OutcomeErrored) != (d.Err != nil) {
				t.Errorf("err = %v", d.Err)
			}
		})
	}
}

func TestValidateTimeoutAnswersByFailurePolicy(t *testing.T) {
	t.Parallel()
	s := newRealScriptTimeout(t, `export default { validate() { for (;;) {} } }`, 200*time.Millisecond)
	start := time.Now()
	d := Validate(t.Context(), s, scripting.AdmissionRequest{Operation: "CREATE", Object: configMap(nil)})
	if d.Allowed || d.Code != 500 || !errors.Is(d.Err, scripting.ErrTimeout) || !strings.Contains(d.Message, "policy.js validate failed: policy.js:1:") {
		t.Errorf("decision = %+v, want a denial by failurePolicy Fail naming the script's line", d)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("took %s", time.Since(start))
	}
}

const labelMutator = `export default {
  mutate(obj, ctx) {
    const out = util.clone(obj);
    switch (obj.metadata.labels.do) {
    case "label": out.metadata.labels.team = "platform"; delete out.data.k; return out;
    case "same": return util.clone(obj);
    case "none": return undefined;
    case "rename": out.metadata.name = "other"; return out;
    case "kind": out.kind = "Secret"; return out;
    case "metadata": out.metadata = "x"; return out;
    case "uid": delete out.metadata.uid; return out;
    }
  },
  admission: { mode: MODE, failurePolicy: "Fail" },
};`

func TestMutateDecision(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		do, mode, wantPatch, wantOutcome, wantErr string
	}{
		{"label", "enforce", `[{"op":"remove","path":"/data/k"},{"op":"add","path":"/metadata/labels/team","value":"platform"}]`, OutcomeAllowed, ""},
		{"same", "enforce", "", OutcomeAllowed, ""},
		{"none", "enforce", "", OutcomeAllowed, ""},
		{"label", "warn", "", OutcomeWarned, ""},
		{"label", "audit", "", OutcomeAudited, ""},
		{"rename", "enforce", "", OutcomeErrored, "it changes metadata.name (replace /metadata/name)"},
		{"kind", "enforce", "", OutcomeErrored, "it changes kind (replace /kind)"},
		{"metadata", "enforce", "", OutcomeErrored, "it changes metadata.name (replace /metadata)"},
		{"uid", "enforce", "", OutcomeErrored, "it changes metadata.uid (remove /metadata/uid)"},
	} {
		t.Run(tc.do+" "+tc.mode, func(t *testing.T) {
			t.Parallel()
			s := newRealScript(t, strings.ReplaceAll(labelMutator, "MODE", `"`+tc.mode+`"`))
			d := Mutate(t.Context(), s, scripting.AdmissionRequest{Operation: "CREATE", Object: configMap(map[string]any{"do": tc.do})})
			if !samePatch(t, d.Patch, tc.wantPatch) || d.Outcome != tc.wantOutcome {
				t.Errorf("patch %s, outcome %s; want %s, %s (%+v)", d.Patch, d.Outcome, tc.wantPatch, tc.wantOutcome, d)
			}
			if tc.wantErr != "" && (!errors.Is(d.Err, ErrProtectedField) || !strings.Contains(d.Message, tc.wantErr) || d.Allowed) {
				t.Errorf("decision = %+v, want a denial containing %q", d, tc.wantErr)
			}
		})
	}
}

func TestMutateObjectOnDeleteIsAnError(t *testing.T) {
	t.Parallel()
	s := newRealScript(t, `export default { mutate(obj, ctx) { return util.clone(ctx.oldObject) }, admission: { operations: ["DELETE"] } }`)
	d := Mutate(t.Context(), s, scripting.AdmissionRequest{Operation: "DELETE", OldObject: configMap(nil)})
	if d.Allowed || !strings.Contains(d.Message, "mutate returned an object for a DELETE request") {
		t.Errorf("decision = %+v", d)
	}
}

// samePatch compares JSON Patches as sets of operations: the diff's order follows map
// iteration where the paths are independent.
func samePatch(t *testing.T, got []byte, want string) bool {
	t.Helper()
	if len(got) == 0 || want == "" {
		return len(got) == 0 && want == ""
	}
	var a, b []map[string]any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &b); err != nil {
		t.Fatal(err)
	}
	key := func(ops []map[string]any) []string {
		out := make([]string, len(ops))
		for i, op := range ops {
			j, _ := json.Marshal(op)
			out[i] = string(j)
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(key(a), key(b))
}

func metaGVR(group, version, resource string) metav1.GroupVersionResource {
	return metav1.GroupVersionResource{Group: group, Version: version, Resource: resource}
}

func rawExt(b []byte) runtime.RawExtension { return runtime.RawExtension{Raw: b} }
