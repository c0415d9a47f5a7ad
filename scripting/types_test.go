package scripting

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// declaredMembers returns the member names of interface name in the declarations.
func declaredMembers(t *testing.T, name string) []string {
	t.Helper()
	src := string(Declarations())
	start := regexp.MustCompile(`(?m)^interface ` + name + `\b[^{]*\{\n`).FindStringIndex(src)
	if start == nil {
		t.Fatalf("jsinformer.d.ts declares no interface %s", name)
	}
	body, _, found := strings.Cut(src[start[1]:], "\n}")
	if !found {
		t.Fatalf("interface %s is not closed", name)
	}
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^  (?:readonly )?(\w+)\??[(<:]`).FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return out
}

// TestDeclarationsMatchTheRuntime keeps jsinformer.d.ts in step with what a script really
// gets: every member of every global and of ctx, ctx.cache, the definition and a watch entry is
// declared, and nothing is declared that does not exist.
func TestDeclarationsMatchTheRuntime(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "d.js", `export default { onAdd() {} }`, Options{})
	globals := map[string][]string{}
	var cache, store, outbox []string
	present := map[string]bool{}
	onRuntime(t, s, func(in *instance) {
		for _, g := range []string{"log", "console", "util", "k8s", "defineScript"} {
			present[g] = in.rt.Get(g) != nil
			if g != "defineScript" {
				globals[g] = in.rt.Get(g).ToObject(in.rt).Keys()
			}
		}
		cache = in.ctxObj.Get("cache").ToObject(in.rt).Keys()
		store = in.ctxObj.Get("store").ToObject(in.rt).Keys()
		outbox = in.ctxObj.Get("outbox").ToObject(in.rt).Keys()
	})
	keysOf := func(global string) []string { return globals[global] }
	tests := []struct {
		iface   string
		runtime []string
	}{
		{"Log", keysOf("log")},
		{"Console", keysOf("console")},
		{"Util", keysOf("util")},
		{"K8s", keysOf("k8s")},
		{"Context", ctxKeys},
		{"Cache", cache},
		{"ScriptStore", store},
		{"ScriptOutbox", outbox},
		{"OutboxOptions", outboxKeys},
		{"Delivery", []string{"key", "attempt", "attempts", "interrupted"}},
		{"AdmissionContext", admitCtxKeys},
		{"ScriptDefinition", definitionKeys},
		{"WatchSpec", watchEntryKeys},
		{"ScheduleEntry", scheduleKeys},
		{"MetricFamily", metricKeys},
		{"MetricSample", sampleKeys},
		{"MetricHandle", metricHandleKeys},
		{"Permission", permissionKeys},
		{"AdmissionOptions", admissionKeys},
	}
	for _, tt := range tests {
		t.Run(tt.iface, func(t *testing.T) {
			t.Parallel()
			want := slices.Sorted(slices.Values(tt.runtime))
			if got := declaredMembers(t, tt.iface); !slices.Equal(got, want) {
				t.Errorf("interface %s declares %q; the runtime has %q", tt.iface, got, want)
			}
		})
	}
	onRuntime(t, s, func(in *instance) {
		for _, g := range []string{"fetch", "Headers", "Response", "AbortController", "AbortSignal"} {
			present[g] = in.rt.Get(g) != nil
		}
	})
	for _, global := range []string{"log", "console", "util", "k8s", "defineScript", "fetch", "Headers", "Response", "AbortController", "AbortSignal"} {
		if !regexp.MustCompile(`(?m)^declare (var|function|class) ` + global + `\b`).Match(Declarations()) {
			t.Errorf("the global %s is not declared", global)
		}
		if !present[global] {
			t.Errorf("the declared global %s does not exist", global)
		}
	}
}

func TestDefineScriptIsTheIdentity(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ file, src string }{
		{"esm.ts", `const def = { onAdd(o: any) { (globalThis as any).out = defineScript(def) === def } };
			export default defineScript(def);`},
		{"cjs.js", `module.exports = defineScript({ onAdd(o) { globalThis.out = o.metadata.name } })`},
	} {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			s := newTestScript(t, tt.file, tt.src, Options{})
			if !s.Definition().OnAdd {
				t.Fatalf("the definition has no onAdd")
			}
			if err := s.OnAdd(sample(), Event{}); err != nil {
				t.Fatal(err)
			}
			if got := outJSON(t, s); got != "true" && got != `"web"` {
				t.Errorf("out = %s", got)
			}
		})
	}
	_, err := instantiate("bad.js", "export default defineScript()", Options{})
	if err == nil || !strings.Contains(err.Error(), "must export a definition object") {
		t.Errorf("defineScript() with nothing: error %v", err)
	}
}
