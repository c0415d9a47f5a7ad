package scripting

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// hostileScript runs body in onAdd with `a` a sparse array of length 2**32-1 and stores what
// it threw, as "Name: message", in globalThis.out.
const hostileScript = `export default { onAdd(obj, ctx) {
  const a = []; a.length = 2 ** 32 - 1;
  try { %s; globalThis.out = "no error" } catch (e) { globalThis.out = e.name + ": " + e.message }
} }`

func TestValuesCrossingIntoGoAreBounded(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, body, want string }{
		{"log fields", `log.info("x", { a })`, "RangeError: log.info: value too large: an array of length 4294967295"},
		{"log nested", `log.warn("x", { deep: { list: [1, a] } })`, "RangeError: log.warn: value too large"},
		{"log dense array", `log.info("x", { d: new Array(2 ** 20).fill(0) })`,
			"RangeError: log.info: value too large: an array of length 1048576"},
		{"log message", `let s = "x".repeat(2 ** 23); s = s + s + s; log.info(s)`, "RangeError: log.info: value too large: more than 16 Mi characters"},
		{"console string", `let s = "x".repeat(2 ** 23); s = s + s + s; console.log(s)`, "RangeError: console.info: value too large"},
		{"util.clone", `util.clone({ a })`, "RangeError: util.clone: value too large: an array of length 4294967295"},
		{"util.diff", `util.diff({ a }, {})`, "RangeError: util.diff: value too large"},
		{"k8s.create body", `k8s.create("configmaps", { metadata: { name: "x" }, data: { a } })`,
			"RangeError: k8s.create: value too large: an array of length 4294967295"},
		{"k8s.patch body", `k8s.patch("configmaps", "ns", "x", { a })`, "RangeError: k8s.patch: value too large"},
		{"k8s.patch toJSON", `k8s.patch("configmaps", "ns", "x", { toJSON() { return a } })`, "RangeError: k8s.patch: value too large"},
		{"k8s string argument", `let s = "x".repeat(2 ** 23); s = s + s + s; k8s.get("configmaps", "ns", s)`,
			"RangeError: k8s.get: value too large"},
		{"ctx.enqueue key", `ctx.enqueue("x".repeat(2000))`, "RangeError: ctx.enqueue: key of 2000 characters is too long"},
		{"JSON.stringify", `JSON.stringify({ a })`, "RangeError: JSON.stringify: value too large: an array of length 4294967295"},
		{"JSON.stringify replacer", `JSON.stringify({}, (k, v) => k === "" ? { a } : v)`, "RangeError: JSON.stringify: value too large"},
		{"JSON.stringify allowlist", `JSON.stringify({ a }, ["a"])`, "RangeError: JSON.stringify: value too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newTestScript(t, "h.js", strings.Replace(hostileScript, "%s", tt.body, 1),
				Options{Client: &fakeClient{}, Timeout: time.Minute, Logger: slog.New(newLogRecorder())})
			defer s.Close()
			if err := s.OnAdd(sample(), Event{Enqueue: func(string) {}}); err != nil {
				t.Fatalf("OnAdd: %v", err)
			}
			if got := outJSON(t, s); !strings.Contains(got, tt.want) {
				t.Errorf("threw %s, want %q", got, tt.want)
			}
		})
	}
}

func TestPathologicalBuiltinsThrow(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, body, want string }{
		{"lastIndexOf", `a.lastIndexOf(1)`, "RangeError: Array.prototype.lastIndexOf: length 4294967295 is too large"},
		{"indexOf array-like", `Array.prototype.indexOf.call({ length: 2 ** 53 - 1 }, 1)`, "RangeError: Array.prototype.indexOf: length"},
		{"forEach", `a.forEach(() => {})`, "RangeError: Array.prototype.forEach"},
		{"join", `a.join()`, "RangeError: Array.prototype.join"},
		{"join separator", `const b = []; b.length = 4096; b.join("x".repeat(2 ** 13))`, "RangeError: Array.prototype.join"},
		{"toString", `String(a)`, "RangeError: Array.prototype.toString"},
		{"concat", `[].concat(a)`, "RangeError: Array.prototype.concat"},
		{"sort", `a.sort()`, "RangeError: Array.prototype.sort"},
		{"fill", `a.fill(0)`, "RangeError: Array.prototype.fill"},
		{"Array.from", `Array.from({ length: 2 ** 32 - 1 })`, "RangeError: Array.from"},
		{"apply", `Math.max.apply(null, a)`, "RangeError: Function.prototype.apply"},
		{"Reflect.apply", `Reflect.apply(Math.max, null, a)`, "RangeError: Reflect.apply"},
		{"repeat", `"x".repeat(2 ** 30)`, "RangeError: String.prototype.repeat"},
		{"padEnd", `"x".padEnd(2 ** 30)`, "RangeError: String.prototype.padEnd"},
		{"typed array", `new Uint8Array(2 ** 31)`, "RangeError: Uint8Array: length 2147483648"},
		{"typed array from array-like", `Float64Array.from({ length: 2 ** 31 })`, "RangeError: Float64Array"},
		{"array buffer", `new ArrayBuffer(2 ** 31)`, "RangeError: ArrayBuffer"},
		{"spread", `[...a]`, "RangeError: Array.prototype.values: length 4294967295"},
		{"spread arguments", `Math.max(...a)`, "RangeError: Array.prototype.values"},
		{"Set", `new Set(a)`, "RangeError: Array.prototype.values"},
		{"keys iterator", `[...a.keys()]`, "RangeError: Array.prototype.keys"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newTestScript(t, "h.js", strings.Replace(hostileScript, "%s", tt.body, 1), Options{Timeout: time.Minute})
			defer s.Close()
			start := time.Now()
			if err := s.OnAdd(sample(), Event{}); err != nil {
				t.Fatalf("OnAdd: %v", err)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %v: the guard did not stop the built-in up front", took)
			}
			if got := outJSON(t, s); !strings.Contains(got, tt.want) {
				t.Errorf("threw %s, want %q", got, tt.want)
			}
		})
	}
}

// The guards are invisible to scripts that stay within the limits.
func TestGuardedBuiltinsBehave(t *testing.T) {
	t.Parallel()
	src := `export default { onAdd() { globalThis.out = [
  [3, 1, 2].sort(), [1, 2].map((x) => x * 2), Array.from([1, 2], (x) => x + 1), "ab".repeat(2), "7".padStart(3, "0"),
  new Uint8Array(4).length, new Uint8Array(2) instanceof Uint8Array, Array.from(Uint8Array.from([1, 2])),
  new Uint8Array([1]).constructor === Uint8Array, Math.max.apply(null, [1, 5]), [1, [2]].concat([3]).length,
  JSON.stringify({ a: [1, { b: 2 }] }), JSON.stringify({ a: 1, b: 2, c: 3 }, ["c", "a"]),
  JSON.stringify({ a: 1, b: "x" }, (k, v) => (typeof v === "number" ? v + 1 : v)), JSON.stringify([1], null, 1),
  JSON.stringify(undefined) === undefined, [1, 2, 3].lastIndexOf(3), Array.prototype.map.name, [].join.length,
  (() => { const o = {}; o.__proto__ = { z: 1 }; return o.z + Object.setPrototypeOf({}, { y: 2 }).y })(),
  ({}).__proto__ === Object.prototype,
  (() => { let n = 0; for (const x of [1, 2]) n += x; return [...[3, 4]].concat([...new Set([5])], Array.from([1].entries())).length + n })(),
] } }`
	s := newTestScript(t, "g.js", src, Options{})
	defer s.Close()
	if err := s.OnAdd(sample(), Event{}); err != nil {
		t.Fatal(err)
	}
	want := `[[1,2,3],[2,4],[2,3],"abab","007",4,true,[1,2],true,5,3,` +
		`"{\"a\":[1,{\"b\":2}]}","{\"c\":3,\"a\":1}","{\"a\":2,\"b\":\"x\"}","[\n 1\n]",true,2,"map",1,3,true,7]`
	if got := outJSON(t, s); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestIndexAndThrownValuesAreBounded(t *testing.T) {
	t.Parallel()
	src := `export default {
  indexers: { huge: () => { const a = []; a.length = 2 ** 32 - 1; return a } },
  onAdd() { const a = []; a.length = 2 ** 32 - 1; throw { a } },
}`
	s := newTestScript(t, "b.js", src, Options{})
	defer s.Close()
	if _, err := s.Index("huge", sample()); err == nil || !strings.Contains(err.Error(), "returned an array of 4294967295 values") {
		t.Errorf("Index error = %v", err)
	}
	err := s.OnAdd(sample(), Event{})
	var se *ScriptError
	if !errors.As(err, &se) || len(se.Message) > 100 {
		t.Errorf("OnAdd error = %v", err)
	}
}

func TestThrownMessagesAreCapped(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "m.js", `export default { onAdd() { throw new Error("é".repeat(2 ** 20)) } }`, Options{})
	defer s.Close()
	err := s.OnAdd(sample(), Event{})
	var se *ScriptError
	if !errors.As(err, &se) || len(se.Message) > maxMessage+64 || !strings.HasSuffix(se.Message, " more bytes)") {
		t.Errorf("message of %d bytes ending %q", len(se.Message), se.Message[max(0, len(se.Message)-40):])
	}
	if !utf8.ValidString(se.Message) {
		t.Error("the cut split a character")
	}
}
