package scripting

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"testing"

	"github.com/dop251/goja"
)

// bareEnv is a callEnv on a fresh runtime, with no instance, executor or other global.
func bareEnv(t *testing.T) *callEnv {
	t.Helper()
	env := newCallEnv(goja.New())
	if err := env.captureInternals(); err != nil {
		t.Fatal(err)
	}
	return env
}

// setGlobal defines name as what g exports.
func setGlobal(t *testing.T, env *callEnv, name string, g global) {
	t.Helper()
	obj, err := g.exports()
	if err != nil {
		t.Fatalf("%s: exports: %v", name, err)
	}
	if err := env.rt.Set(name, obj); err != nil {
		t.Fatal(err)
	}
}

// evalJSON evaluates expr in env's runtime and returns it as JSON.
func evalJSON(t *testing.T, env *callEnv, expr string) string {
	t.Helper()
	v, err := env.rt.RunString("JSON.stringify(" + expr + ")")
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v.String()
}

type ctxKey struct{}

// TestGlobalsAlone constructs each global's type on a bare runtime, with only what it is
// given, and calls it from JS: no instance, executor or other global is needed.
func TestGlobalsAlone(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(t *testing.T, env *callEnv) (check func(t *testing.T))
		expr  string
		want  string
	}{
		{"util", func(t *testing.T, env *callEnv) func(*testing.T) {
			setGlobal(t, env, "util", newUtil(env, nil))
			return nil
		},
			`[util.clone({a: [1]}).a.concat(2), util.base64Decode(util.base64Encode("hé")), util.diff({a: 1}, {a: 2})]`,
			`[[1,2],"hé",[{"path":"a","old":1,"new":2}]]`},
		{"defineScript", func(t *testing.T, env *callEnv) func(*testing.T) {
			setGlobal(t, env, "defineScript", defineScript{env.rt})
			return nil
		},
			`defineScript({onAdd: 1})`, `{"onAdd":1}`},
		{"console", setupConsole, `console.warn("a", {b: 1}, 2)`, `undefined`},
		{"log", setupLog, `log.info("m", {replicas: 3})`, `undefined`},
		{"k8s", setupK8s, `k8s.get("v1/configmaps", "ns", "cm").metadata`, `{"name":"cm","namespace":"ns"}`},
		{"ctx", setupCtx, `[ctx.script, ctx.resource, ctx.cache.get("default", "web").metadata.name, ctx.enqueue("default/web")]`,
			`["s.js","apps/v1/deployments","web",null]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := bareEnv(t)
			check := tt.setup(t, env)
			if got := evalJSON(t, env, tt.expr); got != tt.want {
				t.Errorf("%s = %s, want %s", tt.expr, got, tt.want)
			}
			if check != nil {
				check(t)
			}
		})
	}
}

func setupConsole(t *testing.T, env *callEnv) func(*testing.T) {
	rec := newLogRecorder()
	setGlobal(t, env, "console", newConsole(env, slog.New(rec)))
	return func(t *testing.T) {
		want := []logRecord{{Level: slog.LevelWarn, Msg: `a {"b":1} 2`, Attrs: map[string]any{}}}
		if got := rec.all(); !reflect.DeepEqual(got, want) {
			t.Errorf("records = %+v, want %+v", got, want)
		}
	}
}

func setupLog(t *testing.T, env *callEnv) func(*testing.T) {
	rec := newLogRecorder()
	setGlobal(t, env, "log", newLog(env, slog.New(rec)))
	return func(t *testing.T) {
		want := []logRecord{{Level: slog.LevelInfo, Msg: "m",
			Attrs: map[string]any{fieldsGroup: map[string]any{"replicas": int64(3)}}}}
		if got := rec.all(); !reflect.DeepEqual(got, want) {
			t.Errorf("records = %+v, want %+v", got, want)
		}
	}
}

// setupK8s checks that the call reaches the client with the context k8sModule was given.
func setupK8s(t *testing.T, env *callEnv) func(*testing.T) {
	client := &fakeClient{}
	ctx := context.WithValue(t.Context(), ctxKey{}, "the call's")
	var gotCtx any
	client.fn = func(c context.Context, call fakeCall) (Object, error) {
		gotCtx = c.Value(ctxKey{})
		return Object{"metadata": map[string]any{"name": call.Name, "namespace": call.Namespace}}, nil
	}
	setGlobal(t, env, "k8s", newK8s(env, client, func() context.Context { return ctx }))
	return func(t *testing.T) {
		if gotCtx != "the call's" {
			t.Errorf("client got context value %v, want the call's", gotCtx)
		}
		if calls := client.recorded(); len(calls) != 1 || calls[0].Method != "Get" || calls[0].Name != "cm" {
			t.Errorf("calls = %+v, want one Get of cm", calls)
		}
	}
}

// setupCtx makes a ctx reading an event set directly, as the instance sets it per call.
func setupCtx(t *testing.T, env *callEnv) func(*testing.T) {
	var enqueued []string
	c := newCtx(env, "s.js")
	c.ev = Event{Resource: "apps/v1/deployments", Cache: &fakeCache{objs: []Object{sample()}},
		Enqueue: func(key string) { enqueued = append(enqueued, key) }}
	if err := env.rt.Set("ctx", env.rt.NewDynamicObject(c)); err != nil {
		t.Fatal(err)
	}
	return func(t *testing.T) {
		if !reflect.DeepEqual(enqueued, []string{"default/web"}) {
			t.Errorf("enqueued %q, want [default/web]", enqueued)
		}
	}
}

// TestCallEnvThrows checks the error path every binding shares: a Go error thrown by a
// binding is a JS Error a script can catch, and behind an uncaught one the Go error is found
// until the call ends.
func TestCallEnvThrows(t *testing.T) {
	t.Parallel()
	env := bareEnv(t)
	setGlobal(t, env, "k8s", newK8s(env, nil, context.Background))
	if got, want := evalJSON(t, env, `(() => { try { k8s.get("v1/pods", "", "p") } catch (e) { return [e instanceof Error, e.message] } })()`),
		`[true,"k8s.get: k8s client not available"]`; got != want {
		t.Errorf("caught = %s, want %s", got, want)
	}
	_, err := env.rt.RunString(`k8s.delete("v1/pods", "", "p")`)
	var x *goja.Exception
	if !errors.As(err, &x) {
		t.Fatalf("uncaught throw = %v, want a *goja.Exception", err)
	}
	if goErr := env.goErrorOf(x); goErr == nil || goErr.Error() != "k8s.delete: k8s client not available" {
		t.Errorf("Go error behind the throw = %v", goErr)
	}
	env.endCall()
	if goErr := env.goErrorOf(x); goErr != nil {
		t.Errorf("after endCall, Go error behind the throw = %v, want none", goErr)
	}
}
