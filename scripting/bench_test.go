package scripting

import "testing"

// BenchmarkOnUpdate measures the per-event cost the engine pays: deadline, two views, ctx and
// a small handler reading two fields.
func BenchmarkOnUpdate(b *testing.B) {
	s := newTestScript(b, "bench.js", `let n = 0;
export default { onUpdate(o, n2, ctx) { if (o.metadata.name !== n2.spec.replicas) n++ } }`, Options{})
	oldObj, newObj := sample(), sample()
	ev := Event{Resource: "apps/v1/deployments"}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.OnUpdate(oldObj, newObj, ev); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkIndex(b *testing.B) {
	s := newTestScript(b, "bench.js", `export default { indexers: {
  byImage: (d) => d.spec.template.spec.containers.map((c) => c.image) } }`, Options{})
	obj := sample()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Index("byImage", obj); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStringify measures JSON.stringify of a Deployment-sized view, which scripts get
// bounded (stringify.go): a replacer of ours sees every value.
func BenchmarkStringify(b *testing.B) {
	s := newTestScript(b, "bench.js", `let n = 0;
export default { onAdd(o) { n += JSON.stringify(o).length } }`, Options{})
	obj := sample()
	b.ReportAllocs()
	for b.Loop() {
		if err := s.OnAdd(obj, Event{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkArrayMethods measures a handler calling guarded built-ins (guard.go).
func BenchmarkArrayMethods(b *testing.B) {
	s := newTestScript(b, "bench.js", `let n = 0;
export default { onAdd(o) {
  const cs = o.spec.template.spec.containers;
  n += cs.map((c) => c.image).filter((i) => i.includes(":")).indexOf("nginx:1.27") + [1, 2, 3].join(",").length;
} }`, Options{})
	obj := sample()
	b.ReportAllocs()
	for b.Loop() {
		if err := s.OnAdd(obj, Event{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSpread measures spreading a small plain array, which goes through the guarded
// Array.prototype[Symbol.iterator] instead of goja's fast path.
func BenchmarkSpread(b *testing.B) {
	s := newTestScript(b, "bench.js", `const xs = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]; let n = 0;
export default { onAdd() { n += [...xs].length } }`, Options{})
	obj := sample()
	b.ReportAllocs()
	for b.Loop() {
		if err := s.OnAdd(obj, Event{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInstantiate measures a new version's runtime: globals, guards, module evaluation.
func BenchmarkInstantiate(b *testing.B) {
	p, err := Compile("bench.js", []byte(`export default { onAdd(obj) { return obj.metadata.name; } };`))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		s, err := p.Instantiate(Options{})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// BenchmarkIndexAll is BenchmarkIndex through IndexAll in batches of 256 objects, as the
// engine's index stage calls it; ns/op, B/op and allocs/op are per object.
func BenchmarkIndexAll(b *testing.B) {
	s := newTestScript(b, "bench.js", `export default { indexers: {
  byImage: (d) => d.spec.template.spec.containers.map((c) => c.image) } }`, Options{})
	objs := make([]Object, 256)
	for i := range objs {
		objs[i] = sample()
	}
	out := make([]IndexResult, len(objs))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if n%len(objs) == 0 {
			s.IndexAll(objs, out)
		}
		n++
	}
}
