package scripting

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestViewsAreReadOnly(t *testing.T) {
	t.Parallel()
	statements := []string{
		`obj.kind = "Pod"`,
		`obj.newField = 1`,
		`obj.metadata.labels.app = "x"`,
		`obj["metadata"]["name"] = "x"`,
		`delete obj.kind`,
		`delete obj.metadata.labels.app`,
		`Object.defineProperty(obj, "kind", {value: "Pod"})`,
		`Object.assign(obj.spec, {replicas: 1})`,
		`obj.spec.template.spec.containers.push({})`,
		`obj.spec.template.spec.containers[0] = {}`,
		`obj.spec.template.spec.containers[0].image = "evil"`,
		`obj.spec.template.spec.containers.length = 0`,
		`obj.spec.template.spec.containers.sort()`,
		`obj.spec.template.spec.containers.pop()`,
		`ctx.resource = "x"`,
		`ctx.cache.get = null`,
		`Object.setPrototypeOf(obj, { kind: "Pod" })`,
		`obj.__proto__ = { kind: "Pod" }`,
		`obj.spec.__proto__ = null`,
		`Reflect.setPrototypeOf(obj.spec.template.spec.containers, null)`,
		`Object.setPrototypeOf(ctx, null)`,
		`ctx.cache.__proto__ = {}`,
	}
	for _, mode := range []struct{ name, file, prefix string }{
		{"strict", "m.js", "export default "},
		{"sloppy", "c.js", "module.exports = "},
	} {
		for _, stmt := range statements {
			t.Run(mode.name+"/"+stmt, func(t *testing.T) {
				t.Parallel()
				src := mode.prefix + "{ onAdd(obj, ctx) {\n" + stmt + "\n} }"
				s := newTestScript(t, mode.file, src, Options{})
				obj := sample()
				before := mustJSON(t, obj)
				err := s.OnAdd(obj, Event{Resource: "r"})
				var se *ScriptError
				if !errors.As(err, &se) || !strings.Contains(se.Message, "TypeError") || !strings.Contains(se.Message, "read-only") {
					t.Fatalf("error = %v, want a read-only TypeError", err)
				}
				if se.Line != 2 {
					t.Errorf("line = %d, want 2", se.Line)
				}
				if after := mustJSON(t, obj); after != before {
					t.Errorf("object changed:\n%s\n%s", before, after)
				}
			})
		}
	}
}

func TestReadOnlyMessage(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "m.js", `export default { onAdd(obj) { try { obj.x = 1 } catch (e) { globalThis.out = [e instanceof TypeError, e.message] } } }`, Options{})
	if err := s.OnAdd(sample(), Event{}); err != nil {
		t.Fatal(err)
	}
	if got, want := outJSON(t, s), `[true,"object is read-only; use util.clone(obj) for a mutable copy"]`; got != want {
		t.Errorf("out = %s, want %s", got, want)
	}
}

func TestViewOperations(t *testing.T) {
	t.Parallel()
	containers := "obj.spec.template.spec.containers"
	tests := []struct{ expr, want string }{
		{"JSON.stringify(obj.metadata)", `"{\"generation\":2,\"labels\":{\"app\":\"web\",\"app.kubernetes.io/name\":\"web\"},\"name\":\"web\",\"namespace\":\"default\",\"resourceVersion\":\"7\"}"`},
		{"Object.keys(obj)", `["apiVersion","kind","metadata","spec","status"]`},
		{"Object.entries(obj.metadata.labels)", `[["app","web"],["app.kubernetes.io/name","web"]]`},
		{"(() => { const k = []; for (const x in obj.spec) k.push(x); return k })()", `["paused","ratio","replicas","template"]`},
		{"({...obj.metadata.labels, extra: 1})", `{"app":"web","app.kubernetes.io/name":"web","extra":1}`},
		{"(() => { const {name, ...rest} = obj.metadata; return [name, Object.keys(rest).length] })()", `["web",4]`},
		{containers + ".map((c) => c.image)", `["nginx:1.27","envoy:1.30"]`},
		{containers + ".filter((c) => c.name === 'sidecar').length", `1`},
		{containers + ".some((c) => c.image.startsWith('envoy'))", `true`},
		{containers + ".find((c) => c.name === 'app').image", `"nginx:1.27"`},
		{containers + ".map((c) => c.name).includes('app')", `true`},
		{containers + ".length", `2`},
		{containers + "[1].name", `"sidecar"`},
		{containers + "[5]", `undefined`},
		{"[..." + containers + "].length", `2`},
		{"Array.isArray(" + containers + ")", `true`},
		{containers + ".indexOf(" + containers + "[1])", `1`},
		{containers + ".slice(1).map((c) => c.name)", `["sidecar"]`},
		{"JSON.stringify(" + containers + ".map((c) => c.name))", `"[\"app\",\"sidecar\"]"`},
		{"typeof obj.spec.replicas", `"number"`},
		{"obj.spec.replicas + 1", `4`},
		{"Number.isInteger(obj.metadata.generation)", `true`},
		{"obj.spec.ratio * 2", `1`},
		{"obj.spec.paused === false", `true`},
		{"obj.status === null", `true`},
		{"obj.missing === undefined", `true`},
		{"'kind' in obj", `true`},
		{"obj.hasOwnProperty('spec')", `true`},
		{"Object.prototype.hasOwnProperty.call(obj, 'nope')", `false`},
		{"obj.spec === obj.spec", `true`},
		{"obj.metadata.labels['app.kubernetes.io/name']", `"web"`},
		{"Object.keys(util.clone(obj)).length", `5`},
		{"String(obj.metadata.name).toUpperCase()", `"WEB"`},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()
			s := newTestScript(t, "v.js", "export default { onAdd(obj) { globalThis.out = "+tt.expr+" } }", Options{})
			if err := s.OnAdd(sample(), Event{}); err != nil {
				t.Fatal(err)
			}
			if got := outJSON(t, s); got != tt.want {
				t.Errorf("%s = %s, want %s", tt.expr, got, tt.want)
			}
		})
	}
}

func TestViewOfHandBuiltGoValues(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "v.js", `export default { onAdd(obj) { globalThis.out = [obj.a.length, obj.b.x, obj.c, obj.d, typeof obj.e] } }`, Options{})
	obj := Object{"a": []string{"x", "y"}, "b": map[string]string{"x": "1"}, "c": 7, "d": int32(8), "e": float32(1.5)}
	if err := s.OnAdd(obj, Event{}); err != nil {
		t.Fatal(err)
	}
	if got, want := outJSON(t, s), `[2,"1",7,8,"number"]`; got != want {
		t.Errorf("out = %s, want %s", got, want)
	}
	if !reflect.DeepEqual(obj["a"], []string{"x", "y"}) {
		t.Error("object changed")
	}
}

func TestViewManyNestedChildren(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "v.js", `export default { onAdd(obj) {
		const seen = Object.keys(obj.m).map((k) => obj.m[k]);
		globalThis.out = [seen.length, Object.keys(obj.m).every((k, i) => obj.m[k] === seen[i]), obj.m.k7.n] } }`, Options{})
	m := map[string]any{}
	for i := range 40 {
		m["k"+string(rune('0'+i%10))+string(rune('a'+i/10))] = map[string]any{"n": int64(i)}
	}
	m["k7"] = map[string]any{"n": int64(7)}
	if err := s.OnAdd(Object{"m": m}, Event{}); err != nil {
		t.Fatal(err)
	}
	if got, want := outJSON(t, s), `[41,true,7]`; got != want {
		t.Errorf("out = %s, want %s", got, want)
	}
}

// Read-only objects say so: frozen, sealed, not extensible, every property non-writable and
// non-configurable; freezing one again is a no-op that succeeds, as on any frozen object,
// and writes still throw the documented message. Ordinary objects are unaffected.
func TestViewsReportFrozen(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "m.js", `export default { onAdd(obj, ctx) {
  const c = obj.spec.template.spec.containers, d = Object.getOwnPropertyDescriptor(obj, "kind");
  const ds = Object.getOwnPropertyDescriptors(c), rd = Reflect.getOwnPropertyDescriptor(c, "length");
  const plain = { a: 1 };
  let after;
  try { Object.freeze(obj).kind = "x"; } catch (e) { after = e.message; }
  globalThis.out = {
    frozen: [obj, obj.metadata, c, ctx, ctx.cache].map((o) => Object.isFrozen(o) && Object.isSealed(o) && !Object.isExtensible(o) && !Reflect.isExtensible(o)),
    kind: [d.value, d.writable, d.configurable, d.enumerable],
    array: [ds[0].writable, ds[0].configurable, ds.length.writable, rd.writable, rd.value],
    same: [Object.freeze(obj) === obj, Object.seal(c) === c, Object.preventExtensions(obj) === obj, Reflect.preventExtensions(obj)],
    after,
    plain: [Object.isFrozen(plain), Object.getOwnPropertyDescriptor(plain, "a").writable, Object.isFrozen(Object.freeze(plain))],
  };
} }`, Options{})
	if err := s.OnAdd(sample(), Event{}); err != nil {
		t.Fatal(err)
	}
	want := `{"frozen":[true,true,true,true,true],"kind":["Deployment",false,false,true],"array":[false,false,false,false,2],` +
		`"same":[true,true,true,true],"after":"object is read-only; use util.clone(obj) for a mutable copy","plain":[false,true,true]}`
	if got := outJSON(t, s); got != want {
		t.Errorf("out = %s\nwant  %s", got, want)
	}
}
