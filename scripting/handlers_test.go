package scripting

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

const recorderScript = `
const seen = [];
export default {
  onAdd(obj, ctx) { seen.push(["add", obj && obj.metadata.name, ctx.resource, ctx.isInInitialList]); globalThis.out = seen },
  onUpdate(o, n, ctx) { seen.push(["update", o.spec.replicas, n.spec.replicas, ctx.script]); globalThis.out = seen },
  onDelete(obj, ctx) { seen.push(["delete", obj === null ? null : obj.metadata.name, ctx.finalStateUnknown]); globalThis.out = seen },
};
`

func TestHandlersReceiveArguments(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "rec.js", recorderScript, Options{})
	newer := sample()
	newer["spec"] = map[string]any{"replicas": int64(5)}
	steps := []func() error{
		func() error { return s.OnAdd(sample(), Event{Resource: "deploy", IsInInitialList: true}) },
		func() error { return s.OnUpdate(sample(), newer, Event{Resource: "deploy"}) },
		func() error { return s.OnDelete(sample(), Event{Resource: "deploy"}) },
		func() error { return s.OnDelete(nil, Event{Resource: "deploy", FinalStateUnknown: true}) },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	want := `[["add","web","deploy",true],["update",3,5,"rec.js"],["delete","web",false],["delete",null,true]]`
	if got := outJSON(t, s); got != want {
		t.Errorf("seen = %s\nwant   %s", got, want)
	}
}

func TestMissingHandlersAreNoOps(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "idx.js", `export default { indexers: { x: () => "v" } }`, Options{})
	if err := s.OnAdd(sample(), Event{}); err != nil {
		t.Error(err)
	}
	if err := s.OnUpdate(sample(), sample(), Event{}); err != nil {
		t.Error(err)
	}
	if err := s.OnDelete(nil, Event{}); err != nil {
		t.Error(err)
	}
	if res, err := s.Reconcile("ns/x", Event{}); err != nil || res != (ReconcileResult{}) {
		t.Errorf("Reconcile = %v, %v", res, err)
	}
	if vals, err := s.Index("unknown", sample()); vals != nil || err != nil {
		t.Errorf("Index(unknown) = %v, %v", vals, err)
	}
}

func TestIndexReturnTypes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		want       []string
		wantErr    string
	}{
		{"string", `return o.metadata.name`, []string{"web"}, ""},
		{"array", `return ["a", "b"]`, []string{"a", "b"}, ""},
		{"empty array", `return []`, []string{}, ""},
		{"mapped view array", `return o.spec.template.spec.containers.map((c) => c.image)`, []string{"nginx:1.27", "envoy:1.30"}, ""},
		{"view array of strings", `return Object.keys(o.metadata.labels)`, []string{"app", "app.kubernetes.io/name"}, ""},
		{"undefined", `return undefined`, nil, ""},
		{"null", `return null`, nil, ""},
		{"number", `return 5`, nil, "indexers.ix must return a string, an array of strings, or null; got a number (5)"},
		{"object", `return {a: 1}`, nil, "indexers.ix must return a string, an array of strings, or null; got an object"},
		{"array with number", `return ["a", 1]`, nil, "indexers.ix returned an array whose element 1 is a number (1), not a string"},
		{"throws", `throw new Error("no")`, nil, "ix.js:1:44: Error: no"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newTestScript(t, "ix.js", "export default { indexers: { ix(o) { "+tt.body+" } } }", Options{})
			got, err := s.Index("ix", sample())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				var se *ScriptError
				if !errors.As(err, &se) {
					t.Errorf("error %T is not a *ScriptError", err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Index = %#v, %v; want %#v", got, err, tt.want)
			}
		})
	}
}

func TestReconcileResults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		want       time.Duration
		wantErr    string
	}{
		{"nothing", ``, 0, ""},
		{"null", `return null`, 0, ""},
		{"empty object", `return {}`, 0, ""},
		{"duration string", `return {requeueAfter: "1m30s"}`, 90 * time.Second, ""},
		{"milliseconds", `return {requeueAfter: 1500}`, 1500 * time.Millisecond, ""},
		{"fractional milliseconds", `return {requeueAfter: 2.5}`, 2500 * time.Microsecond, ""},
		{"uses key", `return {requeueAfter: key === "ns/a" ? "2s" : "1s"}`, 2 * time.Second, ""},
		{"async", `await null; return {requeueAfter: "3s"}`, 3 * time.Second, ""},
		{"bad string", `return {requeueAfter: "soon"}`, 0, `reconcile returned an invalid requeueAfter: time: invalid duration "soon"`},
		{"negative", `return {requeueAfter: -5}`, 0, "reconcile returned an invalid requeueAfter: -5ms is negative"},
		{"wrong type", `return {requeueAfter: true}`, 0, "want a duration string"},
		{"not an object", `return 5`, 0, "reconcile must return nothing or {requeueAfter}; got a number (5)"},
		{"typo", `return {requeueAfer: "1s"}`, 0, "reconcile returned an object with the unknown key 'requeueAfer'; did you mean 'requeueAfter'?"},
		{"other key", `return {done: true}`, 0, "reconcile returned an object with the unknown key 'done'; it may only have requeueAfter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newTestScript(t, "r.js", "export default { async reconcile(key, ctx) { "+tt.body+" } }", Options{})
			got, err := s.Reconcile("ns/a", Event{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got.RequeueAfter != tt.want {
				t.Errorf("Reconcile = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestAsyncHandlers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		wantErr    string
	}{
		{"resolved after awaiting k8s", `const o = await k8s.get("pods", "ns", "a"); globalThis.out = o.metadata.name`, ""},
		{"resolved chain", `await Promise.resolve(1).then((x) => x + 1); globalThis.out = "a"`, ""},
		{"rejected with error", "await null;\n throw new RangeError(\"late\")", "async.js:2:8: RangeError: late"},
		{"rejected with value", `await Promise.reject("plain")`, "async.js: plain"},
		{"pending", `await new Promise(() => {})`, "onAdd returned a promise that is still pending with no fetch in flight"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newTestScript(t, "async.js", "export default { async onAdd(obj) { "+tt.body+" } }", Options{Client: &fakeClient{}})
			err := s.OnAdd(sample(), Event{})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := outJSON(t, s); got != `"a"` {
					t.Errorf("out = %s", got)
				}
				return
			}
			var se *ScriptError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error = %v, want *ScriptError containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestIndexThisIsIndexers(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "it.js", `export default { indexers: {
		base(o) { return o.metadata.name },
		byName(o) { return this.base(o) + "!" } } }`, Options{})
	got, err := s.Index("byName", sample())
	if err != nil || !reflect.DeepEqual(got, []string{"web!"}) {
		t.Errorf("Index = %v, %v", got, err)
	}
}
