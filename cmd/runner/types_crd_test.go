package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/internal/tsc"
)

// patternResources are the --gvr flags for testdata/crds/patterns.yaml's resources, both
// versions of Gateway, and Deployments (whose Pod template holds core/v1's Probe).
var patternResources = []string{"--gvr", "routes.patterns.jsinformer.io", "--gvr", "probes.patterns.jsinformer.io",
	"--gvr", "patterns.jsinformer.io/v1/gateways", "--gvr", "patterns.jsinformer.io/v1beta1/gateways", "--gvr", "deploy"}

// usesPatterns uses what `runner types` generates for the patterns; it must type-check.
const usesPatterns = `import type { Route, RouteSpecMatch, RouteSpecPrimary, Probe, CoreV1Probe, Gateway, V1Gateway, Deployment, JsonValue } from "./resources";

export default defineScript<Route>({
  watch: "routes.patterns.jsinformer.io",
  onAdd(r) {
    // A oneOf/anyOf that only validates leaves the properties typed.
    const m: RouteSpecMatch | undefined = r.spec?.match;
    const hosts: readonly string[] = r.spec?.hosts ?? (r.spec?.host ? [r.spec.host] : []);
    // Any JSON value: narrowed before use.
    const c = r.spec?.config;
    const kind = typeof c === "string" ? c : Array.isArray(c) ? "list of " + c.length : c === null ? "null" : typeof c;
    const image = r.spec?.values?.["image"];
    const tag = typeof image === "object" && image !== null && "tag" in image ? image.tag : undefined;
    const timeout: string | undefined = r.spec?.settings?.timeout;
    const extra: unknown = r.spec?.settings?.["retries"];
    // The same shape in two places is one type.
    const backends: RouteSpecPrimary[] = [r.spec?.primary, r.spec?.fallback].filter((b) => b !== undefined).map((b) => util.clone(b));
    // A clone is writable, free-form data too.
    const copy = util.clone(r);
    if (copy.spec?.values) copy.spec.values["image"] = { tag: "v2", pull: ["Always"] };
    const v: JsonValue = { list: [1, "two", null, { three: true }] };
    log.info("route", { prefix: m?.prefix, hosts, kind, tag, timeout, extra: String(extra), backends, v });
  },
});

export function probeURL(p: Probe): string | undefined {
  return p.spec?.url;
}

export function liveness(d: Deployment): CoreV1Probe | undefined {
  return d.spec?.template.spec?.containers[0]?.livenessProbe;
}

export function ports(g: Gateway, g1: V1Gateway): number[] {
  const a = (g.spec?.servers ?? []).map((s) => s.port ?? 0);
  const b = (g1.spec?.listeners ?? []).map((l) => l.port ?? 0);
  const versions: ["patterns.jsinformer.io/v1beta1", "patterns.jsinformer.io/v1"] = [g.apiVersion, g1.apiVersion];
  log.info("gateway", { versions });
  return [...a, ...b];
}
`

// patternMistakes are scripts tsc must reject, with the message it must give.
var patternMistakes = map[string]struct{ code, error string }{
	"misspelt-match.ts": {"import type { Route } from \"./resources\";\n" +
		"export default defineScript<Route>({ onAdd(r) { log.info(String(r.spec?.match?.prefx)); } });",
		`Property 'prefx' does not exist on type`},
	"writes-a-match.ts": {"import type { Route } from \"./resources\";\n" +
		"export default defineScript<Route>({ onAdd(r) { if (r.spec?.match) r.spec.match.prefix = \"/\"; } });",
		`Cannot assign to 'prefix' because it is a read-only property`},
	"misspelt-spec-field.ts": {"import type { Route } from \"./resources\";\n" +
		"export default defineScript<Route>({ onAdd(r) { log.info(String(r.spec?.hots)); } });",
		`Property 'hots' does not exist on type`},
	"config-as-object.ts": {"import type { Route } from \"./resources\";\n" +
		"export default defineScript<Route>({ onAdd(r) { log.info(String(r.spec?.config?.url)); } });",
		`Property 'url' does not exist on type`},
	"free-form-as-any.ts": {"import type { Route } from \"./resources\";\n" +
		"export default defineScript<Route>({ onAdd(r) { if (r.spec?.values) r.spec.values[\"image\"].tag = \"x\"; } });",
		`Property 'tag' does not exist on type`},
	"writes-free-form.ts": {"import type { Route } from \"./resources\";\n" +
		"export default defineScript<Route>({ onAdd(r) { const i = r.spec?.values?.[\"image\"]; if (typeof i === \"object\" && i !== null && \"tag\" in i) i.tag = \"x\"; } });",
		`Index signature in type .* only permits reading`},
	"writes-unknown-field.ts": {"import type { Route } from \"./resources\";\n" +
		"export default defineScript<Route>({ onAdd(r) { if (r.spec?.settings) r.spec.settings[\"retries\"] = 3; } });",
		`Index signature in type .* only permits reading`},
	"probe-is-the-crd.ts": {"import type { Probe } from \"./resources\";\n" +
		"export default defineScript<Probe>({ onAdd(p) { log.info(String(p.spec?.httpGet)); } });",
		`Property 'httpGet' does not exist on type`},
	"gateway-is-storage-version.ts": {"import type { Gateway } from \"./resources\";\n" +
		"export const g: Gateway[\"apiVersion\"] = \"patterns.jsinformer.io/v1\";",
		`Type '"patterns.jsinformer.io/v1"' is not assignable to type '"patterns.jsinformer.io/v1beta1"'`},
	"shape-field-type.ts": {"import type { RouteSpecFallback } from \"./resources\";\n" +
		"export const b: RouteSpecFallback = { name: \"a\", weight: \"heavy\" };",
		`Type 'string' is not assignable to type 'number'`},
}

// TestTypesOfCRDPatterns installs CRDs with the schema patterns of real ones into the control
// plane, generates their types with `runner types`, and runs the pinned tsc: a script using
// them type-checks, and each mistake is rejected.
func TestTypesOfCRDPatterns(t *testing.T) {
	cp := controlplane.Require(t, env)
	applyPatternCRDs(t, cp)
	compiler := tsc.Install(t)
	args := append([]string{"--kubeconfig", cp.Kubeconfig}, patternResources...)

	good := t.TempDir()
	copyExamples(t, good, "tsconfig.json")
	runTypes(t, good, args...)
	resources, err := os.ReadFile(filepath.Join(good, "resources.d.ts"))
	if err != nil {
		t.Fatal(err)
	}
	hint := "// In a script: import type { Route, Probe, V1Gateway, Gateway, Deployment } from \"./resources\";\n"
	if !strings.Contains(string(resources), hint) {
		t.Errorf("resources.d.ts lacks the hint %q", hint)
	}
	writeFile(t, filepath.Join(good, "patterns.ts"), usesPatterns)
	if out, err := tsc.Check(t, compiler, good); err != nil {
		t.Fatalf("tsc over a script using the patterns: %v\n%s", err, out)
	}

	bad := t.TempDir()
	copyExamples(t, bad, "tsconfig.json")
	runTypes(t, bad, args...)
	for name, src := range patternMistakes {
		writeFile(t, filepath.Join(bad, name), src.code)
	}
	out, err := tsc.Check(t, compiler, bad)
	if err == nil {
		t.Fatalf("tsc accepted scripts with mistakes:\n%s", out)
	}
	for name, src := range patternMistakes {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\(\d+,\d+\): error TS\d+: ` + src.error).MatchString(out) {
			t.Errorf("tsc did not report %s's mistake (%s):\n%s", name, src.error, out)
		}
	}
}

// TestTypesNamesDoNotChange: the interface a resource gets, and the hint, are the same alone
// and with other resources generated beside it, before or after.
func TestTypesNamesDoNotChange(t *testing.T) {
	cp := controlplane.Require(t, env)
	applyPatternCRDs(t, cp)
	probe := regexp.MustCompile(`(?m)^export interface Probe \{\n(?:.*\n)*?  apiVersion: "patterns.jsinformer.io/v1";\n`)
	for _, tt := range []struct {
		gvrs []string
		hint string
	}{
		{[]string{"probes.patterns.jsinformer.io"}, "Probe"},
		{[]string{"probes.patterns.jsinformer.io", "deploy"}, "Probe, Deployment"},
		{[]string{"deploy", "probes.patterns.jsinformer.io"}, "Deployment, Probe"},
		{[]string{"pods", "probes.patterns.jsinformer.io", "patterns.jsinformer.io/v1/gateways"}, "Pod, Probe, Gateway"},
	} {
		t.Run(strings.Join(tt.gvrs, "+"), func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"--kubeconfig", cp.Kubeconfig}
			for _, g := range tt.gvrs {
				args = append(args, "--gvr", g)
			}
			runTypes(t, dir, args...)
			out, err := os.ReadFile(filepath.Join(dir, "resources.d.ts"))
			if err != nil {
				t.Fatal(err)
			}
			if !probe.Match(out) {
				t.Errorf("Probe is not the custom resource's interface")
			}
			if hint := "import type { " + tt.hint + " } from"; !bytes.Contains(out, []byte(hint)) {
				t.Errorf("the hint is not %q", hint)
			}
		})
	}
}

// applyPatternCRDs creates testdata/crds/patterns.yaml's CRDs and waits until the cluster
// publishes the schemas of all their kinds.
func applyPatternCRDs(t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	dyn := dynamic.NewForConfigOrDie(cp.Config)
	data, err := os.ReadFile(filepath.Join("testdata", "crds", "patterns.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		crd := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &crd.Object); err != nil {
			t.Fatal(err)
		}
		if _, err := dyn.Resource(crdResource).Create(t.Context(), crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create CRD %s: %v", crd.GetName(), err)
		}
	}
	disc := discovery.NewDiscoveryClientForConfigOrDie(cp.Config)
	want := map[string][]string{"apis/patterns.jsinformer.io/v1": {"Route", "Probe", "Gateway"}, "apis/patterns.jsinformer.io/v1beta1": {"Gateway"}}
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := publishes(disc, want)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pattern CRDs' schemas are not published: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// publishes checks that /openapi/v3 has a schema for each kind of each document.
func publishes(disc discovery.DiscoveryInterface, want map[string][]string) error {
	paths, err := disc.OpenAPIV3().Paths()
	if err != nil {
		return err
	}
	for path, kinds := range want {
		gv, ok := paths[path]
		if !ok {
			return fmt.Errorf("no /openapi/v3/%s", path)
		}
		data, err := gv.Schema("application/json")
		if err != nil {
			return err
		}
		var doc struct {
			Components struct {
				Schemas map[string]struct {
					GVK []struct{ Kind string } `json:"x-kubernetes-group-version-kind"`
				} `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return err
		}
		for _, k := range kinds {
			found := false
			for _, s := range doc.Components.Schemas {
				for _, g := range s.GVK {
					found = found || g.Kind == k
				}
			}
			if !found {
				return fmt.Errorf("no schema for %s in /openapi/v3/%s", k, path)
			}
		}
	}
	return nil
}
