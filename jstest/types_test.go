package jstest

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jsinformer/jsinformer/internal/memcluster"
	"github.com/jsinformer/jsinformer/offline"
	"github.com/jsinformer/jsinformer/scripting"
)

// declaredMembers returns the member names of interface name in src (declarations laid
// out as in jsinformer-test.d.ts: two-space indented members, "}" closing at column 0).
func declaredMembers(t *testing.T, file, src, name string) []string {
	t.Helper()
	start := regexp.MustCompile(`(?m)^interface ` + name + `\b[^{]*\{\n`).FindStringIndex(src)
	if start == nil {
		t.Fatalf("%s declares no interface %s", file, name)
	}
	body, _, found := strings.Cut(src[start[1]:], "\n}")
	if !found {
		t.Fatalf("%s: interface %s is not closed", file, name)
	}
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^  (?:readonly )?(\w+)\??[(<:]`).FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return slices.Compact(slices.Sorted(slices.Values(out))) // overloads name a method twice
}

// declaredGlobals returns the names of the globals src declares.
func declaredGlobals(src string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^declare (?:var|function) (\w+)\b`).FindAllStringSubmatch(src, -1) {
		out = append(out, m[1])
	}
	return slices.Sorted(slices.Values(out))
}

// declaredUnion returns the string literals of type alias name in src.
func declaredUnion(t *testing.T, src, name string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^type ` + name + ` = (.*);$`).FindStringSubmatch(src)
	if m == nil {
		t.Fatalf("jsinformer-test.d.ts declares no type %s", name)
	}
	var out []string
	for _, lit := range regexp.MustCompile(`"(\w+)"`).FindAllStringSubmatch(m[1], -1) {
		out = append(out, lit[1])
	}
	return slices.Sorted(slices.Values(out))
}

// runtimeKeys is what a test file really gets: its globals, the members of test, expect(x),
// expect(x).not, console and of a harness, read from a runtime set up as RunFile sets one up.
type runtimeKeys struct {
	globals, test, expect, expectation, not, console, harness []string
}

func readRuntimeKeys(t *testing.T) runtimeKeys {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.js"), []byte(`export default { watch: "v1/configmaps", onAdd() {} };`), 0o644); err != nil {
		t.Fatal(err)
	}
	prg, err := scripting.Compile("k.test.js", []byte(""))
	if err != nil {
		t.Fatal(err)
	}
	f, err := newFileRun(t.Context(), "k.test.js", dir, prg, Options{Timeout: time.Minute, QuietTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer f.closeHarnesses()
	keys := func(expr string) []string {
		t.Helper()
		v, err := f.rt.RunString("Object.keys(" + expr + ")")
		if err != nil {
			t.Fatalf("Object.keys(%s): %v", expr, err)
		}
		var out []string
		if err := f.rt.ExportTo(v, &out); err != nil {
			t.Fatal(err)
		}
		return slices.Sorted(slices.Values(out))
	}
	var k runtimeKeys
	k.globals = keys("globalThis") // before the line below adds one
	if _, err := f.rt.RunString(`globalThis.h = harness("./p.js")`); err != nil {
		t.Fatalf("harness: %v", err)
	}
	k.test, k.expect, k.console, k.harness = keys("test"), keys("expect"), keys("console"), keys("h")
	k.expectation, k.not = keys("expect(1)"), keys("expect(1).not")
	return k
}

// TestDeclarationsMatchTheRuntime keeps jsinformer-test.d.ts in step with what a test file
// really gets: every global, matcher, harness member and option the runtime defines is
// declared, and nothing is declared that the runtime does not define.
func TestDeclarationsMatchTheRuntime(t *testing.T) {
	t.Parallel()
	const file = "jsinformer-test.d.ts"
	src, base := string(Declarations()), string(scripting.Declarations())
	if !strings.Contains(src, `/// <reference path="./jsinformer.d.ts" />`) {
		t.Errorf("%s does not reference jsinformer.d.ts, whose types it uses", file)
	}
	rt := readRuntimeKeys(t)
	// console is declared by jsinformer.d.ts, for plugins and tests alike.
	if !slices.Contains(declaredGlobals(base), "console") {
		t.Errorf("jsinformer.d.ts does not declare console")
	}
	globals := slices.Sorted(slices.Values(append(declaredGlobals(src), "console")))
	if !slices.Equal(globals, rt.globals) {
		t.Errorf("declared globals %q; a test file's runtime has %q", globals, rt.globals)
	}
	if len(rt.expect) != 0 {
		t.Errorf("expect has members %q; expect is declared as a plain function", rt.expect)
	}
	matchers := declaredMembers(t, file, src, "Matchers")
	expectation := slices.Sorted(slices.Values(append(declaredMembers(t, file, src, "Expectation"), matchers...)))
	tests := []struct {
		iface      string
		file, src  string
		declared   []string // when not the interface's own members
		runtime    []string
		runtimeWas string
	}{
		{iface: "TestFunction", runtime: rt.test, runtimeWas: "test"},
		{iface: "Matchers", runtime: rt.not, runtimeWas: "expect(x).not"},
		{iface: "Expectation", declared: expectation, runtime: rt.expectation, runtimeWas: "expect(x)"},
		{iface: "Harness", runtime: rt.harness, runtimeWas: "harness(plugin)"},
		{iface: "Console", file: "jsinformer.d.ts", src: base, runtime: rt.console, runtimeWas: "console"},
		{iface: "HarnessOptions", runtime: harnessOptionKeys, runtimeWas: "harness's accepted options"},
		{iface: "HarnessFlags", runtime: harnessFlagKeys, runtimeWas: "harness's accepted flags"},
		{iface: "HarnessListOptions", runtime: listOptionKeys, runtimeWas: "h.list's accepted options"},
		{iface: "HarnessWrite", runtime: writeKeys(), runtimeWas: "an entry of h.writes"},
		{iface: "HarnessAdmissionRequest", runtime: admitKeys, runtimeWas: "h.admit's accepted request"},
		{iface: "HarnessAdmission", runtime: slices.Collect(maps.Keys(admitAnswer(offline.AdmissionResult{}))), runtimeWas: "h.admit's answer"},
		{iface: "HarnessAuditOptions", runtime: auditOptionKeys, runtimeWas: "h.audit's accepted options"},
		{iface: "HarnessAudit", runtime: slices.Collect(maps.Keys(auditView(nil))), runtimeWas: "h.audit's answer"},
		{iface: "HarnessAdmissionDecision", runtime: slices.Collect(maps.Keys(decisionValue(offline.AdmissionCall{}))), runtimeWas: "a decision of h.admit"},
	}
	for _, tt := range tests {
		t.Run(tt.iface, func(t *testing.T) {
			t.Parallel()
			if tt.file == "" {
				tt.file, tt.src = file, src
			}
			if tt.declared == nil {
				tt.declared = declaredMembers(t, tt.file, tt.src, tt.iface)
			}
			if want := slices.Sorted(slices.Values(tt.runtime)); !slices.Equal(tt.declared, want) {
				t.Errorf("interface %s declares %q; %s has %q", tt.iface, tt.declared, tt.runtimeWas, want)
			}
		})
	}
	var patchTypeNames []string
	for name := range patchTypes {
		patchTypeNames = append(patchTypeNames, name)
	}
	if got, want := declaredUnion(t, src, "HarnessPatchType"), slices.Sorted(slices.Values(patchTypeNames)); !slices.Equal(got, want) {
		t.Errorf("HarnessPatchType is %q; h.patch takes %q", got, want)
	}
}

// writeKeys are the properties of an h.writes entry with every optional one set.
func writeKeys() []string {
	h := &harness{writes: []memcluster.Write{{
		Verb: "patch", Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: "x", Name: "y",
		Body: map[string]any{}, PatchType: types.MergePatchType, PropagationPolicy: "Orphan",
		Err: apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "y"),
	}, {Verb: "delete", Err: errors.New("not an API error")}}}
	var out []string
	for _, w := range h.writeList() {
		for k := range w {
			out = append(out, k)
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}
