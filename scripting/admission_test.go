package scripting

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestAdmissionDefinitionDefaults(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "v.js", `export default { validate(obj) {} }`, Options{})
	def := s.Definition()
	want := AdmissionSpec{Operations: []string{"CREATE", "UPDATE"}, FailurePolicy: "Fail", TimeoutSeconds: 10, Mode: "enforce"}
	if !def.Validate || def.Mutate || !reflect.DeepEqual(def.Admission, want) {
		t.Errorf("definition = validate %t mutate %t %+v, want validate only with %+v", def.Validate, def.Mutate, def.Admission, want)
	}
	s = newTestScript(t, "m.js", `export default { mutate(obj) {}, admission: {
  operations: ["CREATE", "DELETE"], failurePolicy: "Ignore", timeoutSeconds: 3, mode: "audit" } }`, Options{})
	want = AdmissionSpec{Operations: []string{"CREATE", "DELETE"}, FailurePolicy: "Ignore", TimeoutSeconds: 3, Mode: "audit"}
	if def := s.Definition(); !def.Mutate || !reflect.DeepEqual(def.Admission, want) {
		t.Errorf("definition = mutate %t %+v, want %+v", def.Mutate, def.Admission, want)
	}
	s = newTestScript(t, "h.js", `export default { onAdd() {} }`, Options{})
	if def := s.Definition(); def.Validate || def.Mutate || !reflect.DeepEqual(def.Admission, AdmissionSpec{}) {
		t.Errorf("a script without admission has %+v", def.Admission)
	}
}

func TestAdmissionDefinitionErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, src, want string }{
		{"validate not a function", "export default {\n  validate: 1 }", "v.js:2: 'validate' must be a function, got a number (1)"},
		{"admission without functions", "export default { onAdd() {},\n  admission: {} }", "v.js:2: 'admission' configures validate and mutate, but the definition has neither"},
		{"admission not an object", "export default { validate() {},\n  admission: 3 }", "v.js:2: 'admission' must be an object"},
		{"unknown key", "export default { validate() {}, admission: {\n  failurePolicyy: 'Fail' } }", "v.js:2: unknown key 'failurePolicyy' in 'admission'; did you mean 'failurePolicy'?"},
		{"bad policy", "export default { validate() {}, admission: {\n  failurePolicy: 'fail' } }", `v.js:2: 'admission.failurePolicy' must be one of "Fail", "Ignore", got a string ("fail"); did you mean "Fail"?`},
		{"bad mode", "export default { validate() {}, admission: {\n  mode: 'warning' } }", `v.js:2: 'admission.mode' must be one of "enforce", "warn", "audit"`},
		{"timeout too long", "export default { validate() {}, admission: {\n  timeoutSeconds: 31 } }", "v.js:2: 'admission.timeoutSeconds' must be between 1 and 30, got 31"},
		{"timeout zero", "export default { validate() {}, admission: {\n  timeoutSeconds: 0 } }", "v.js:2: 'timeoutSeconds' must be a positive integer"},
		{"operation unknown", "export default { validate() {}, admission: {\n  operations: ['PATCH'] } }", "v.js:2: 'admission.operations' has a string (\"PATCH\"); valid operations are CREATE, UPDATE, DELETE, CONNECT, *"},
		{"operations empty", "export default { validate() {}, admission: {\n  operations: [] } }", "v.js:2: 'admission.operations' must list 1 to 4 operations, got 0"},
		{"operation twice", "export default { validate() {}, admission: {\n  operations: ['CREATE', 'CREATE'] } }", `v.js:2: 'admission.operations' lists "CREATE" twice`},
		{"operation in lowercase", "export default { validate() {}, admission: {\n  operations: ['CREATE', 'update'] } }",
			`v.js:2: 'admission.operations' has a string ("update"); valid operations are CREATE, UPDATE, DELETE, CONNECT, * (in capitals, as the API server names them): did you mean "UPDATE"?`},
		{"star with others", "export default { validate() {}, admission: {\n  operations: ['*', 'CREATE'] } }", `v.js:2: 'admission.operations' lists "*" with other operations`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := instantiate("v.js", tc.src, Options{})
			if err == nil || !errors.Is(err, ErrInvalidDefinition) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v\nwant one containing %q", err, tc.want)
			}
		})
	}
}

func TestAdmissionCallLimitsStayUnderTheWebhookTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		seconds             int
		handler             time.Duration
		wantTimeout, wantGr time.Duration
	}{
		{10, 5 * time.Second, 5 * time.Second, time.Second},
		{10, 0, 6 * time.Second, time.Second},
		{1, 5 * time.Second, 600 * time.Millisecond, 200 * time.Millisecond},
		{3, 500 * time.Millisecond, 500 * time.Millisecond, 600 * time.Millisecond},
	} {
		timeout, grace := AdmissionSpec{TimeoutSeconds: tc.seconds}.CallLimits(tc.handler)
		if timeout != tc.wantTimeout || grace != tc.wantGr || timeout+grace >= time.Duration(tc.seconds)*time.Second {
			t.Errorf("CallLimits(%ds, %s) = %s, %s; want %s, %s, summing under the webhook's timeout",
				tc.seconds, tc.handler, timeout, grace, tc.wantTimeout, tc.wantGr)
		}
	}
}

const validateScript = `export default {
  validate(obj, ctx) {
    const labels = (obj && obj.metadata.labels) || {};
    globalThis.out = [ctx.operation, ctx.oldObject && ctx.oldObject.metadata.name, ctx.userInfo.username,
      ctx.dryRun, ctx.subResource, ctx.resource, ctx.namespace, ctx.name, ctx.script,
      ctx.cache.get("default", "other").metadata.name];
    if (!labels.team) return { allowed: false, message: "needs a team label", code: 422, warnings: ["w1"] };
    if (labels.team === "old") return { allowed: true, warnings: ["team old is deprecated"] };
  },
};`

func TestValidateDecisionsAndCtx(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "v.js", validateScript, Options{})
	cache := &fakeCache{objs: []Object{sample()}}
	req := AdmissionRequest{Operation: "UPDATE", Object: sample(), OldObject: sample(), UserInfo: Object{"username": "alice"},
		DryRun: true, SubResource: "scale", Resource: "apps/v1/deployments", Namespace: "default", Name: "web", Cache: cache}
	labelled := func(team string) Object {
		o := sample()
		o["metadata"] = map[string]any{"name": "web", "labels": map[string]any{"team": team}}
		return o
	}
	for _, tc := range []struct {
		name string
		obj  Object
		want Validation
	}{
		{"denied", sample(), Validation{Allowed: false, Message: "needs a team label", Code: 422, Warnings: []string{"w1"}}},
		{"warned", labelled("old"), Validation{Allowed: true, Warnings: []string{"team old is deprecated"}}},
		{"allowed by undefined", labelled("a"), Validation{Allowed: true}},
	} {
		req.Object = tc.obj
		got, err := s.Validate(req)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Validate = %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
	want := `["UPDATE","web","alice",true,"scale","apps/v1/deployments","default","web","v.js","web"]`
	if got := outJSON(t, s); got != want {
		t.Errorf("ctx seen = %s\nwant       %s", got, want)
	}
}

// TestValidateResultErrors: a result that breaks the contract is an error at the line of
// validate in the definition, naming every unknown key.
func TestValidateResultErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ ret, want string }{
		{`"no"`, `v.js:2: validate must return undefined or {allowed, message?, code?, warnings?}; got a string ("no")`},
		{`{ message: "x" }`, "v.js:2: validate must return {allowed: true|false, ...}; allowed is undefined"},
		{`{ allowd: false }`, "v.js:2: validate returned an object with the unknown key 'allowd' (did you mean 'allowed'?); valid keys are allowed, message, code, warnings"},
		{`{ allow: false, msg: "x", reason: "y" }`, "v.js:2: validate returned an object with the unknown keys 'allow' (did you mean 'allowed'?), " +
			"'msg', 'reason'; valid keys are allowed, message, code, warnings"},
		{`{ allowed: false, code: 200 }`, "validate returned a code that is a number (200); it must be an HTTP status from 400 to 599"},
		{`{ allowed: false, message: 3 }`, "validate returned a message that is a number (3), not a string"},
		{`{ allowed: true, warnings: "w" }`, `validate returned warnings that are a string ("w"), not an array of strings`},
		{`{ allowed: true, warnings: Array(33).fill("w") }`, "validate returned 33 warnings (the limit is 32)"},
		{`{ get allowed() { for (;;) {} } }`, "validate timed out"},
	} {
		s := newTestScript(t, "v.js", "export default {\n  validate() { return "+tc.ret+" } }", Options{Timeout: 100 * time.Millisecond})
		_, err := s.Validate(AdmissionRequest{Operation: "CREATE", Object: sample()})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("return %s: err = %v\nwant one containing %q", tc.ret, err, tc.want)
		}
		s.Close()
	}
}

// TestMutateResultErrorsCarryTheLine: mutate's result errors are at mutate's line, and a
// handler's after an admission call on the same runtime are not.
func TestMutateResultErrorsCarryTheLine(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "m.js", "export default {\n  validate() {},\n\n  mutate() { return [1]; },\n  reconcile() { return { done: true }; },\n}", Options{})
	_, err := s.Mutate(AdmissionRequest{Operation: "CREATE", Object: sample()})
	if err == nil || !strings.HasPrefix(err.Error(), "m.js:4: mutate must return the changed object") {
		t.Errorf("err = %v, want mutate's result error at m.js:4", err)
	}
	_, err = s.Reconcile("ns/n", Event{})
	var se *ScriptError
	if !errors.As(err, &se) || se.Line != 0 {
		t.Errorf("reconcile's result error %v, want one at no line", err)
	}
}

func TestMutateReturnsTheChangedObject(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "m.js", `export default {
  mutate(obj, ctx) {
    if (ctx.operation === "DELETE") return obj === null ? undefined : "obj should be null";
    if (obj.metadata.name === "same") return obj;
    const out = util.clone(obj);
    out.metadata.labels = { ...out.metadata.labels, team: "platform" };
    return out;
  },
};`, Options{})
	obj := sample()
	got, err := s.Mutate(AdmissionRequest{Operation: "CREATE", Object: obj})
	if err != nil {
		t.Fatal(err)
	}
	labels := got["metadata"].(map[string]any)["labels"]
	if want := map[string]any{"app": "web", "app.kubernetes.io/name": "web", "team": "platform"}; !reflect.DeepEqual(labels, want) {
		t.Errorf("mutated labels = %v, want %v", labels, want)
	}
	if _, ok := obj["metadata"].(map[string]any)["labels"].(map[string]any)["team"]; ok {
		t.Error("mutate changed the request's object")
	}
	if got, err := s.Mutate(AdmissionRequest{Operation: "DELETE", OldObject: sample()}); got != nil || err != nil {
		t.Errorf("Mutate(DELETE) = %v, %v; want no change", got, err)
	}
	same := sample()
	same["metadata"] = map[string]any{"name": "same"}
	if got, err := s.Mutate(AdmissionRequest{Operation: "CREATE", Object: same}); err != nil || mustJSON(t, got) != mustJSON(t, same) {
		t.Errorf("Mutate(returning obj) = %v, %v; want the object as it was", got, err)
	}
}

func TestAdmissionCallsHaveNoSideEffects(t *testing.T) {
	t.Parallel()
	client := &fakeClient{}
	s := newTestScript(t, "v.js", `export default {
  validate(obj) {
    k8s.get("v1/configmaps", "default", "x"); // reads are fine
    try { k8s.patch("v1/configmaps", "default", "x", {}); } catch (e) { globalThis.out = e.message; }
    k8s.create("v1/configmaps", { metadata: { name: "y" } });
  },
  mutate(obj) { k8s.event(obj, "Normal", "R", "m") },
  onAdd(obj) { k8s.create("v1/configmaps", { metadata: { name: "z" } }) },
};`, Options{Client: client})
	_, err := s.Validate(AdmissionRequest{Operation: "CREATE", Object: sample()})
	if !errors.Is(err, ErrSideEffect) || !strings.Contains(err.Error(), "k8s.create in validate") {
		t.Errorf("Validate err = %v, want ErrSideEffect naming k8s.create", err)
	}
	if got := outJSON(t, s); !strings.Contains(got, "k8s.patch in validate: side effects are not allowed here") {
		t.Errorf("caught = %s", got)
	}
	if _, err := s.Mutate(AdmissionRequest{Operation: "CREATE", Object: sample()}); !errors.Is(err, ErrSideEffect) {
		t.Errorf("Mutate err = %v, want ErrSideEffect", err)
	}
	if err := s.OnAdd(sample(), Event{}); err != nil {
		t.Errorf("onAdd after an admission call: %v (a handler may write)", err)
	}
	var methods []string
	for _, c := range client.recorded() {
		methods = append(methods, c.Method)
	}
	if want := []string{"Get", "Create"}; !reflect.DeepEqual(methods, want) {
		t.Errorf("client calls = %v, want %v", methods, want)
	}
}

func TestAdmissionCallTimesOut(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "v.js", `export default { validate() { for (;;) {} } }`, Options{Timeout: 50 * time.Millisecond})
	start := time.Now()
	_, err := s.Validate(AdmissionRequest{Operation: "CREATE", Object: sample()})
	if !errors.Is(err, ErrTimeout) || time.Since(start) > 2*time.Second {
		t.Errorf("err = %v after %s, want ErrTimeout soon", err, time.Since(start))
	}
}
