package scripting

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestK8sCalls(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		want       fakeCall
		out        string
	}{
		{"get", `globalThis.out = k8s.get("apps/v1/deployments", "ns", "web").metadata`,
			fakeCall{Method: "Get", Resource: "apps/v1/deployments", Namespace: "ns", Name: "web"},
			`{"name":"web","namespace":"ns"}`},
		{"get cluster scoped", `k8s.get("nodes", "", "n1")`, fakeCall{Method: "Get", Resource: "nodes", Name: "n1"}, "undefined"},
		{"list", `globalThis.out = k8s.list("pods", {namespace: "ns", labelSelector: "a=b", fieldSelector: "x=y"}).length`,
			fakeCall{Method: "List", Resource: "pods", List: ListOptions{Namespace: "ns", LabelSelector: "a=b", FieldSelector: "x=y"}}, "2"},
		{"list without options", `k8s.list("pods")`, fakeCall{Method: "List", Resource: "pods"}, "undefined"},
		{"create plain object", `globalThis.out = k8s.create("configmaps", {metadata: {name: "c", namespace: "ns"}, data: {n: 1, f: 1.5, u: undefined}}).data`,
			fakeCall{Method: "Create", Resource: "configmaps", Obj: Object{
				"metadata": map[string]any{"name": "c", "namespace": "ns"}, "data": map[string]any{"n": int64(1), "f": 1.5}}},
			`{"f":1.5,"n":1}`},
		{"update modified clone", `const c = util.clone(obj); c.spec.replicas = 4; k8s.update("deploy", c)`,
			fakeCall{Method: "Update", Resource: "deploy", Obj: func() Object { o := sample(); o["spec"].(map[string]any)["replicas"] = int64(4); return o }()},
			"undefined"},
		{"update spread of view", `k8s.update("deploy", {...obj, spec: {...obj.spec, replicas: 1}})`,
			fakeCall{Method: "Update", Resource: "deploy", Obj: func() Object { o := sample(); o["spec"].(map[string]any)["replicas"] = int64(1); return o }()},
			"undefined"},
		{"updateStatus", `k8s.updateStatus("deploy", {metadata: {name: "a"}, status: {ready: true}})`,
			fakeCall{Method: "UpdateStatus", Resource: "deploy", Obj: Object{"metadata": map[string]any{"name": "a"}, "status": map[string]any{"ready": true}}},
			"undefined"},
		{"merge patch", `k8s.patch("deploy", "ns", "web", {spec: {replicas: 2}})`,
			fakeCall{Method: "Patch", Resource: "deploy", Namespace: "ns", Name: "web", Patch: `{"spec":{"replicas":2}}`,
				PatchOpts: PatchOptions{Type: "merge"}}, "undefined"},
		{"json patch", `k8s.patch("deploy", "ns", "web", [{op: "replace", path: "/spec/replicas", value: 2}], {type: "json"})`,
			fakeCall{Method: "Patch", Resource: "deploy", Namespace: "ns", Name: "web", Patch: `[{"op":"replace","path":"/spec/replicas","value":2}]`,
				PatchOpts: PatchOptions{Type: "json"}}, "undefined"},
		{"apply patch string", `k8s.patch("deploy", "ns", "web", '{"a":1}', {type: "apply", force: true, fieldManager: "me"})`,
			fakeCall{Method: "Patch", Resource: "deploy", Namespace: "ns", Name: "web", Patch: `{"a":1}`,
				PatchOpts: PatchOptions{Type: "apply", Force: true, FieldManager: "me"}}, "undefined"},
		{"patchStatus", `k8s.patchStatus("deploy", "ns", "web", {status: {x: 1}}, {type: "merge"})`,
			fakeCall{Method: "PatchStatus", Resource: "deploy", Namespace: "ns", Name: "web", Patch: `{"status":{"x":1}}`,
				PatchOpts: PatchOptions{Type: "merge"}}, "undefined"},
		{"delete", `globalThis.out = k8s.delete("pods", "ns", "p", {propagationPolicy: "Foreground"})`,
			fakeCall{Method: "Delete", Resource: "pods", Namespace: "ns", Name: "p", Delete: DeleteOptions{PropagationPolicy: "Foreground"}}, "undefined"},
		{"event", `k8s.event(obj, "Warning", "Scaled", "to 3")`,
			fakeCall{Method: "Event", Obj: sample(), EventType: "Warning", Reason: "Scaled", Message: "to 3"}, "undefined"},
		{"event default type", `k8s.event(obj, undefined, "R", "m")`,
			fakeCall{Method: "Event", Obj: sample(), EventType: "Normal", Reason: "R", Message: "m"}, "undefined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			client := &fakeClient{}
			s := newTestScript(t, "k.js", "export default { onAdd(obj) { "+tt.body+" } }", Options{Client: client})
			if err := s.OnAdd(sample(), Event{}); err != nil {
				t.Fatal(err)
			}
			calls := client.recorded()
			if len(calls) != 1 || !reflect.DeepEqual(calls[0], tt.want) {
				t.Errorf("calls = %#v\nwant     %#v", calls, tt.want)
			}
			if got := outJSON(t, s); got != tt.out {
				t.Errorf("out = %s, want %s", got, tt.out)
			}
		})
	}
}

func TestK8sResultsAreReadOnly(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "k.js", `export default { onAdd() { k8s.get("pods", "ns", "a").metadata.name = "x" } }`, Options{Client: &fakeClient{}})
	if err := s.OnAdd(sample(), Event{}); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("error = %v, want read-only", err)
	}
}

func TestK8sErrors(t *testing.T) {
	t.Parallel()
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"not found", apierrors.NewNotFound(gr, "web"),
			`[true,404,"NotFound","get apps/v1/deployments ns/web: deployments.apps \"web\" not found"]`},
		{"conflict", apierrors.NewConflict(gr, "web", errors.New("stale")),
			`[true,409,"Conflict","get apps/v1/deployments ns/web: Operation cannot be fulfilled on deployments.apps \"web\": stale"]`},
		{"wrapped forbidden", fmt.Errorf("client: %w", apierrors.NewForbidden(gr, "web", errors.New("rbac"))),
			`[true,403,"Forbidden","get apps/v1/deployments ns/web: client: deployments.apps \"web\" is forbidden: rbac"]`},
		{"plain go error", errors.New("connection refused"),
			`[true,null,null,"get apps/v1/deployments ns/web: connection refused"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			client := &fakeClient{fn: func(context.Context, fakeCall) (Object, error) { return nil, tt.err }}
			src := `export default { onAdd() {
				try { k8s.get("apps/v1/deployments", "ns", "web") }
				catch (e) { globalThis.out = [e instanceof Error, e.code ?? null, e.reason ?? null, e.message] }
			} }`
			s := newTestScript(t, "k.js", src, Options{Client: client})
			if err := s.OnAdd(sample(), Event{}); err != nil {
				t.Fatal(err)
			}
			if got := outJSON(t, s); got != tt.want {
				t.Errorf("caught %s\nwant   %s", got, tt.want)
			}
		})
	}
}

func TestK8sUncaughtErrorUnwraps(t *testing.T) {
	t.Parallel()
	gr := schema.GroupResource{Resource: "pods"}
	client := &fakeClient{fn: func(context.Context, fakeCall) (Object, error) { return nil, apierrors.NewNotFound(gr, "p") }}
	s := newTestScript(t, "k.js", "export default {\n  onAdd() {\n    k8s.get('pods', 'ns', 'p')\n  }\n}", Options{Client: client})
	err := s.OnAdd(sample(), Event{})
	var se *ScriptError
	if !errors.As(err, &se) || se.Line != 3 {
		t.Fatalf("error = %v, want *ScriptError at line 3", err)
	}
	if !apierrors.IsNotFound(err) {
		t.Errorf("apierrors.IsNotFound(%v) = false", err)
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Code != 404 {
		t.Errorf("errors.As APIStatus failed for %v", err)
	}
}

func TestK8sPanicRecovered(t *testing.T) {
	t.Parallel()
	client := &fakeClient{fn: func(context.Context, fakeCall) (Object, error) { panic("nil map in client") }}
	t.Run("uncaught", func(t *testing.T) {
		t.Parallel()
		s := newTestScript(t, "p.js", "export default {\n  onAdd() {\n    k8s.get('pods', 'ns', 'p')\n  }\n}", Options{Client: client})
		err := s.OnAdd(sample(), Event{})
		var se *ScriptError
		if !errors.As(err, &se) || !errors.Is(err, ErrPanic) {
			t.Fatalf("error = %v, want *ScriptError wrapping ErrPanic", err)
		}
		if want := "p.js:3:9: Error: panic in k8s.get: nil map in client"; err.Error() != want {
			t.Errorf("error = %q, want %q", err, want)
		}
		// The runtime survives the panic.
		if err := s.OnAdd(sample(), Event{}); !errors.Is(err, ErrPanic) {
			t.Errorf("second call: %v", err)
		}
	})
	t.Run("caught", func(t *testing.T) {
		t.Parallel()
		s := newTestScript(t, "p.js", `export default { onAdd() { try { k8s.list('pods') } catch (e) { globalThis.out = e.message } } }`, Options{Client: client})
		if err := s.OnAdd(sample(), Event{}); err != nil {
			t.Fatal(err)
		}
		if got := outJSON(t, s); got != `"panic in k8s.list: nil map in client"` {
			t.Errorf("out = %s", got)
		}
	})
}

func TestK8sTimeoutCancelsContext(t *testing.T) {
	t.Parallel()
	client := &fakeClient{fn: func(ctx context.Context, _ fakeCall) (Object, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	s := newTestScript(t, "t.js", `export default { onAdd() { try { k8s.get("pods", "ns", "p") } catch (e) { for (;;) {} } } }`,
		Options{Client: client, Timeout: 50 * time.Millisecond})
	if err := s.OnAdd(sample(), Event{}); !errors.Is(err, ErrTimeout) {
		t.Fatalf("error = %v, want ErrTimeout", err)
	}
}

func TestK8sInterruptCancelsContext(t *testing.T) {
	t.Parallel()
	entered := make(chan struct{})
	client := &fakeClient{fn: func(ctx context.Context, _ fakeCall) (Object, error) {
		close(entered)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	s := newTestScript(t, "t.js", `export default { onAdd() { k8s.get("pods", "ns", "p") } }`, Options{Client: client, Timeout: time.Minute})
	done := make(chan error, 1)
	go func() { done <- s.OnAdd(sample(), Event{}) }()
	<-entered
	s.Interrupt()
	if err := <-done; !errors.Is(err, ErrInterrupted) && !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want interrupted", err)
	}
}

func TestK8sArgumentErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ call, want string }{
		{`k8s.get()`, "TypeError: k8s.get: resource is required"},
		{`k8s.get("pods", "ns")`, "TypeError: k8s.get: name is required"},
		{`k8s.get("pods", 5, "x")`, "TypeError: k8s.get: namespace must be a string, got a number (5)"},
		{`k8s.list("pods", {labelselector: "a"})`, "TypeError: k8s.list: unknown option 'labelselector'; did you mean 'labelSelector'?"},
		{`k8s.create("pods", [])`, "TypeError: k8s.create: object must be a Kubernetes object, got an array"},
		{`k8s.create("pods")`, "TypeError: k8s.create: object must be a Kubernetes object, got undefined"},
		{`k8s.patch("pods", "ns", "p", {}, {type: "jsonpatch"})`, `TypeError: k8s.patch: patch type must be "merge", "json", "strategic" or "apply", got "jsonpatch"`},
		{`k8s.patch("pods", "ns", "p", 5)`, "TypeError: k8s.patch: patch must be an object, an array or a string, got a number (5)"},
		{`k8s.delete("pods", "ns", "p", {propagationPolicy: "background"})`, `TypeError: k8s.delete: propagationPolicy must be Orphan, Background or Foreground, got "background"`},
		{`k8s.event({}, "Error", "r", "m")`, `TypeError: k8s.event: type must be "Normal" or "Warning", got "Error"`},
		{`const a = {}; a.self = a; k8s.create("cm", a)`, "TypeError: Converting circular structure to JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.call, func(t *testing.T) {
			t.Parallel()
			s := newTestScript(t, "a.js", "export default { onAdd() { "+tt.call+" } }", Options{Client: &fakeClient{}})
			err := s.OnAdd(sample(), Event{})
			var se *ScriptError
			if !errors.As(err, &se) || !strings.HasPrefix(se.Message, tt.want) {
				t.Errorf("error = %v, want message %q", err, tt.want)
			}
		})
	}
}

func TestK8sWithoutClient(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "n.js", `export default { onAdd() { try { k8s.get("pods", "ns", "a") } catch (e) { globalThis.out = e.message } } }`, Options{})
	if err := s.OnAdd(sample(), Event{}); err != nil {
		t.Fatal(err)
	}
	if got := outJSON(t, s); got != `"k8s.get: k8s client not available"` {
		t.Errorf("out = %s", got)
	}
}

func TestK8sErrorStack(t *testing.T) {
	t.Parallel()
	client := &fakeClient{fn: func(context.Context, fakeCall) (Object, error) { return nil, errors.New("refused") }}
	s := newTestScript(t, "k.ts", "export default {\n  onAdd(o: any) {\n    [1].map((x) => k8s.get('pods', 'ns', 'p'))\n  }\n}", Options{Client: client})
	err := s.OnAdd(sample(), Event{})
	var se *ScriptError
	if !errors.As(err, &se) {
		t.Fatal(err)
	}
	if want := "k.ts:3:24: Error: get pods ns/p: refused"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	if want := "at <anonymous> (k.ts:3:24)\nat map (native)\nat onAdd (k.ts:3:9)"; se.Stack != want {
		t.Errorf("stack = %q, want %q", se.Stack, want)
	}
}
