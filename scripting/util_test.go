package scripting

import (
	"log/slog"
	"reflect"
	"testing"
)

func TestUtilClone(t *testing.T) {
	t.Parallel()
	tests := []struct{ expr, want string }{
		{`(() => { const c = util.clone(obj); c.spec.replicas = 9; c.metadata.labels.x = "y"; delete c.status;
			return [c.spec.replicas, obj.spec.replicas, c.metadata.labels.x, obj.metadata.labels.x === undefined, "status" in c] })()`,
			`[9,3,"y",true,false]`},
		{`(() => { const c = util.clone(obj.spec.template.spec.containers); c.push({name: "new"}); c[0].image = "x";
			return [c.length, c[0].image, obj.spec.template.spec.containers[0].image, Array.isArray(c)] })()`,
			`[3,"x","nginx:1.27",true]`},
		{`(() => { const p = {a: {b: [1, {c: 2}]}}; const c = util.clone(p); c.a.b[1].c = 3; return [p.a.b[1].c, c.a.b[1].c] })()`,
			`[2,3]`},
		{`(() => { const p = {v: obj.metadata}; const c = util.clone(p); c.v.name = "z"; return [c.v.name, obj.metadata.name] })()`,
			`["z","web"]`},
		{`[util.clone(5), util.clone("s"), util.clone(null), util.clone(undefined) === undefined]`, `[5,"s",null,true]`},
		{`(() => { const f = () => 1; return util.clone({f}).f === f })()`, `true`},
		{`JSON.stringify(util.clone(obj)) === JSON.stringify(obj)`, `true`},
		{`(() => { try { const a = {}; a.a = a; util.clone(a) } catch (e) { return e.message } })()`,
			`"util.clone: value nested too deeply (is it cyclic?)"`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			s := newTestScript(t, "u.js", "export default { onAdd(obj) { globalThis.out = "+tt.expr+" } }", Options{})
			obj := sample()
			before := mustJSON(t, obj)
			if err := s.OnAdd(obj, Event{}); err != nil {
				t.Fatal(err)
			}
			if got := outJSON(t, s); got != tt.want {
				t.Errorf("out = %s, want %s", got, tt.want)
			}
			if mustJSON(t, obj) != before {
				t.Error("object changed")
			}
		})
	}
}

func TestDiff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a, b any
		want []change
	}{
		{"equal", sample(), sample(), nil},
		{"scalar change", map[string]any{"a": int64(1)}, map[string]any{"a": int64(2)},
			[]change{{path: "a", old: int64(1), new: int64(2), hasOld: true, hasNew: true}}},
		{"int and float equal", map[string]any{"a": int64(1)}, map[string]any{"a": 1.0}, nil},
		{"added and removed", map[string]any{"a": "x"}, map[string]any{"b": "y"},
			[]change{{path: "a", old: "x", hasOld: true}, {path: "b", new: "y", hasNew: true}}},
		{"nested array by index",
			map[string]any{"s": map[string]any{"c": []any{map[string]any{"image": "a"}}}},
			map[string]any{"s": map[string]any{"c": []any{map[string]any{"image": "b"}, "extra"}}},
			[]change{{path: "s.c[0].image", old: "a", new: "b", hasOld: true, hasNew: true}, {path: "s.c[1]", new: "extra", hasNew: true}}},
		{"non-identifier key", map[string]any{"l": map[string]any{"app.kubernetes.io/name": "a"}}, map[string]any{"l": map[string]any{}},
			[]change{{path: `l["app.kubernetes.io/name"]`, old: "a", hasOld: true}}},
		{"type change", map[string]any{"a": map[string]any{}}, map[string]any{"a": nil},
			[]change{{path: "a", old: map[string]any{}, new: nil, hasOld: true, hasNew: true}}},
		{"ignored metadata",
			map[string]any{"metadata": map[string]any{"resourceVersion": "1", "generation": int64(1), "managedFields": []any{"x"}, "name": "a"}},
			map[string]any{"metadata": map[string]any{"resourceVersion": "2", "generation": int64(2), "name": "a"}}, nil},
		{"top-level scalars", "a", "b", []change{{path: "", old: "a", new: "b", hasOld: true, hasNew: true}}},
		{"uncomparable go values", map[string]any{"a": []string{"x"}}, map[string]any{"a": []string{"x"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := diff(tt.a, tt.b); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("diff = %#v\nwant   %#v", got, tt.want)
			}
		})
	}
}

func TestUtilDiffFromJS(t *testing.T) {
	t.Parallel()
	src := `export default { onUpdate(o, n) {
		const c = util.clone(n); c.spec.template.spec.containers[0].image = "nginx:1.28"; c.metadata.labels.tier = "fe";
		globalThis.out = [util.diff(o, n), util.diff(o, c), util.diff({a: [1]}, {a: [1, 2]})];
	} }`
	s := newTestScript(t, "d.js", src, Options{})
	newer := sample()
	newer["metadata"].(map[string]any)["resourceVersion"] = "8"
	if err := s.OnUpdate(sample(), newer, Event{}); err != nil {
		t.Fatal(err)
	}
	want := `[[],[{"path":"metadata.labels.tier","new":"fe"},` +
		`{"path":"spec.template.spec.containers[0].image","old":"nginx:1.27","new":"nginx:1.28"}],` +
		`[{"path":"a[1]","new":2}]]`
	if got := outJSON(t, s); got != want {
		t.Errorf("out = %s\nwant  %s", got, want)
	}
}

func TestLogging(t *testing.T) {
	t.Parallel()
	rec := newLogRecorder()
	src := `export default { onAdd(obj) {
		console.log("hello", obj.metadata.name, 3, {a: 1}, [1, 2], null, undefined);
		console.warn("careful");
		console.error(new Error("bad"));
		console.debug("dbg");
		console.info(obj.metadata.labels);
		log.info("scaled", {replicas: obj.spec.replicas, name: obj.metadata.name, labels: obj.metadata.labels, ok: true});
		log.error("failed");
		log.warn("w", 5);
		log.debug("d", {nested: {x: [1]}});
	} }`
	s := newTestScript(t, "l.js", src, Options{Logger: slog.New(rec)})
	if err := s.OnAdd(sample(), Event{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]any{"app": "web", "app.kubernetes.io/name": "web"}
	want := []logRecord{
		{slog.LevelInfo, `hello web 3 {"a":1} [1,2] null undefined`, map[string]any{"script": "l.js"}},
		{slog.LevelWarn, "careful", map[string]any{"script": "l.js"}},
		{slog.LevelError, "Error: bad", map[string]any{"script": "l.js"}},
		{slog.LevelDebug, "dbg", map[string]any{"script": "l.js"}},
		{slog.LevelInfo, `{"app":"web","app.kubernetes.io/name":"web"}`, map[string]any{"script": "l.js"}},
		{slog.LevelInfo, "scaled", map[string]any{"script": "l.js",
			"attrs": map[string]any{"replicas": int64(3), "name": "web", "labels": labels, "ok": true}}},
		{slog.LevelError, "failed", map[string]any{"script": "l.js"}},
		{slog.LevelWarn, "w", map[string]any{"script": "l.js", "attrs": map[string]any{"fields": int64(5)}}},
		{slog.LevelDebug, "d", map[string]any{"script": "l.js", "attrs": map[string]any{"nested": map[string]any{"x": []any{int64(1)}}}}},
	}
	if got := rec.all(); !reflect.DeepEqual(got, want) {
		t.Errorf("records:\n%#v\nwant\n%#v", got, want)
	}
}

func TestUtilBase64(t *testing.T) {
	t.Parallel()
	tests := []struct{ expr, want string }{
		{`util.base64Encode("hello")`, `"aGVsbG8="`},
		{`util.base64Decode("aGVsbG8=")`, `"hello"`},
		{`util.base64Decode(util.base64Encode("päss wörd ✓"))`, `"päss wörd ✓"`},
		{`util.base64Encode("")`, `""`},
		{`(() => { try { util.base64Decode("not base64!") } catch (e) { return e.name } })()`, `"TypeError"`},
		{`(() => { try { util.base64Decode(5) } catch (e) { return e.name } })()`, `"TypeError"`},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()
			s := newTestScript(t, "b.js", "export default { onAdd(obj) { globalThis.out = "+tt.expr+" } }", Options{})
			if err := s.OnAdd(sample(), Event{}); err != nil {
				t.Fatal(err)
			}
			if got := outJSON(t, s); got != tt.want {
				t.Errorf("%s = %s, want %s", tt.expr, got, tt.want)
			}
		})
	}
}
