package typegen

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/jsinformer/jsinformer/internal/tsc"
)

// patterns is a resource with the schema patterns of real CRDs that once came out as any.
const patterns = `{"type": "object", "properties": {
	"uri": ` + stringMatch + `,
	"target": {"type": "object", "properties": {"name": {"type": "string"}},
		"oneOf": [{"properties": {"url": {"type": "string"}}, "required": ["url"]}, {"properties": {"path": {"type": "string"}}, "required": ["path"]}]},
	"config": {"x-kubernetes-preserve-unknown-fields": true},
	"values": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}`

const tsconfig = `{"compilerOptions": {"target": "ES2022", "lib": ["ES2022"], "module": "ESNext", "moduleResolution": "Bundler",
	"moduleDetection": "force", "strict": true, "noEmit": true, "types": []}, "include": ["*.ts"]}`

// usesPatterns must type-check.
const usesPatterns = `import type { Thing, SpecUri, JsonValue } from "./resources";
declare const t: Thing;
const uri: SpecUri | undefined = t.spec?.uri;
const prefix: string | undefined = uri?.prefix;
const target = t.spec?.target;
const where: string | undefined = target && ("url" in target ? target.url : target.path);
const c = t.spec?.config;
const described: string = typeof c === "string" ? c : Array.isArray(c) ? String(c.length) : typeof c === "number" ? String(c) : "";
const image = t.spec?.values?.["image"];
const tag: JsonValue | undefined = typeof image === "object" && image !== null && "tag" in image ? image.tag : undefined;
const built: Thing["spec"] = { target: { name: "n", path: "/p" }, config: [1, "a", { b: null }], values: { image: { tag: "1" } } };
export { prefix, where, described, tag, built };
`

// patternMistakes are what tsc must reject, by file, with its message.
var patternMistakes = map[string]struct{ code, error string }{
	"misspelt-match.ts":   {`import type { Thing } from "./resources"; declare const t: Thing; export const p = t.spec?.uri?.prefx;`, `Property 'prefx' does not exist on type 'SpecUri'`},
	"match-field-type.ts": {`import type { SpecUri } from "./resources"; export const u: SpecUri = { exact: 1 };`, `Type 'number' is not assignable to type 'string'`},
	"union-neither.ts":    {`import type { Thing } from "./resources"; export const s: Thing["spec"] = { target: { name: "n" } };`, `is not assignable to type`},
	"union-unnarrowed.ts": {`import type { Thing } from "./resources"; declare const t: Thing; export const u: string | undefined = t.spec?.target?.url;`, `Property 'url' does not exist on type`},
	"config-as-number.ts": {`import type { Thing } from "./resources"; declare const t: Thing; export const n: number = t.spec!.config!;`, `is not assignable to type 'number'`},
	"free-form-any.ts":    {`import type { Thing } from "./resources"; declare const t: Thing; export const x = t.spec!.values!["image"].tag;`, `Property 'tag' does not exist on type`},
	"not-json.ts":         {`import type { Thing } from "./resources"; export const s: Thing["spec"] = { config: () => 1 };`, `is not assignable to type 'JsonValue`},
}

// TestGeneratedTypesCheck runs the pinned tsc over a module generated from the patterns: a
// script using them type-checks, and each mistake is rejected.
func TestGeneratedTypesCheck(t *testing.T) {
	t.Parallel()
	compiler := tsc.Install(t)
	out, err := generate(inline(`, "test.v1.Spec": `+patterns), []Resource{{Group: "test.io", Version: "v1", Resource: "things", Kind: "Thing"}}, "test")
	if err != nil {
		t.Fatal(err)
	}
	good := t.TempDir()
	writeFiles(t, good, map[string]string{"resources.d.ts": string(out), "tsconfig.json": tsconfig, "uses.ts": usesPatterns})
	if msg, err := tsc.Check(t, compiler, good); err != nil {
		t.Fatalf("tsc rejects a correct use: %v\n%s\n%s", err, msg, out)
	}
	bad := t.TempDir()
	writeFiles(t, bad, map[string]string{"resources.d.ts": string(out), "tsconfig.json": tsconfig})
	for name, m := range patternMistakes {
		writeFiles(t, bad, map[string]string{name: m.code})
	}
	msg, err := tsc.Check(t, compiler, bad)
	if err == nil {
		t.Fatalf("tsc accepted every mistake")
	}
	for name, m := range patternMistakes {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\(\d+,\d+\): error TS\d+: .*` + m.error).MatchString(msg) {
			t.Errorf("tsc did not reject %s (%s):\n%s", name, m.error, msg)
		}
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
