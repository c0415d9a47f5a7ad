package check

import (
	"fmt"
	"strings"
	"testing"
)

// Policies over ConfigMaps, for the tests: team denies a ConfigMap without a team label and
// warns about team "old"; unique reads its index of the ConfigMaps admitted before; owner
// fills in data.owner.
var policies = map[string]string{
	"team.js": `export default {
  watch: "v1/configmaps",
  validate(cm) {
    const team = cm.metadata.labels?.team;
    if (!team) return { allowed: false, message: "configmap " + cm.metadata.name + " needs a team label" };
    if (team === "old") return { allowed: true, warnings: ["team old is retired"] };
    if (team === "boom") throw new Error("boom");
  },
};
`,
	"unique.js": `export default {
  watch: "v1/configmaps",
  indexers: { byKey: (cm) => (cm.data?.key ? [cm.data.key] : []) },
  validate(cm, ctx) {
    const key = cm.data?.key;
    if (!key) return;
    for (const other of ctx.cache.byIndex("byKey", key)) {
      return { allowed: false, code: 409, message: "key " + key + " is taken by " + other.metadata.namespace + "/" + other.metadata.name };
    }
  },
};
`,
	"owner.js": `export default {
  watch: "v1/configmaps",
  mutate(cm) {
    if (cm.data?.owner) return;
    const out = util.clone(cm);
    out.data = { ...out.data, owner: "platform" };
    return out;
  },
};
`,
	"handler.js": `export default { watch: "v1/configmaps", onAdd(cm) { k8s.delete("v1/configmaps", cm.metadata.namespace, cm.metadata.name); } };
`,
	"lib/util.js":  "export const x = 1;\n",
	"team.test.js": "test('x', () => {});\n",
}

// configMap is a ConfigMap document: labels "team=x", data "key=k".
func configMap(name, team, key string) string {
	s := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n"
	if team != "" {
		s += "  labels: {team: " + team + "}\n"
	}
	if key != "" {
		s += "data: {key: " + key + "}\n"
	}
	return s
}

func docs(parts ...string) string { return strings.Join(parts, "---\n") }

// mixed: a admitted and mutated; b denied by team; c denied by unique (a has its key) and
// warned; d has b's key and passes, b was not stored.
var mixed = docs(configMap("a", "x", "k1"), configMap("b", "", "k2"), configMap("c", "old", "k1"), configMap("d", "yy", "k2"))

// runCheck runs the check of manifests (one file, manifests.yaml) with scripts.
// It returns the report and the scripts' folder.
func runCheck(t *testing.T, scripts map[string]string, manifests string, opts Options) (*Report, string) {
	t.Helper()
	opts.ScriptsDir = writeFiles(t, scripts)
	rep, err := Run(t.Context(), Parse("manifests.yaml", []byte(manifests)), opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep, opts.ScriptsDir
}

// lines is a report as a test compares it: a line per result and per problem.
func lines(r *Report) []string {
	var out []string
	for _, p := range r.Problems {
		out = append(out, "problem "+p.Where()+": "+p.Message)
	}
	for _, o := range r.Objects {
		admitted := map[bool]string{true: "admitted", false: "refused"}[o.Admitted]
		out = append(out, fmt.Sprintf("%s #%d %s", o.Name, o.Document, admitted))
		for _, res := range o.Results {
			line := fmt.Sprintf("  %s %s %s", res.Script, res.Webhook, res.Result)
			if res.Message != "" {
				line += ": " + res.Message
			}
			if res.Patch != nil {
				line += " " + string(res.Patch)
			}
			for _, w := range res.Warnings {
				line += " [" + w + "]"
			}
			out = append(out, line)
		}
	}
	return out
}

const ownerPatch = `[{"op":"add","path":"/data/owner","value":"platform"}]`

func TestRun(t *testing.T) {
	t.Parallel()
	crd := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
`
	widget := func(name string, size int) string {
		return fmt.Sprintf("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: %s, namespace: shop}\nspec: {size: %d}\n", name, size)
	}
	widgetPolicy := map[string]string{"size.js": `export default {
  watch: "example.com/v1/widgets",
  validate(w) { if (w.spec.size > 3) return { allowed: false, message: "too big" }; },
};
`}
	only := func(names ...string) map[string]string {
		out := map[string]string{}
		for _, n := range names {
			out[n] = policies[n]
		}
		return out
	}
	tests := []struct {
		name      string
		scripts   map[string]string
		manifests string
		opts      Options
		code      int
		want      []string
	}{
		{"denials, a warning, patches; the cache holds what was admitted before, not what was denied", policies, mixed, Options{}, 1, []string{
			"a #1 admitted", "  owner.js mutate mutate " + ownerPatch, "  team.js validate pass", "  unique.js validate pass",
			"b #2 refused", "  owner.js mutate mutate " + ownerPatch, "  team.js validate deny: configmap b needs a team label", "  unique.js validate pass",
			"c #3 refused", "  owner.js mutate mutate " + ownerPatch, "  team.js validate warn [team old is retired]", "  unique.js validate deny: key k1 is taken by default/a",
			"d #4 admitted", "  owner.js mutate mutate " + ownerPatch, "  team.js validate pass", "  unique.js validate pass",
		}},
		{"mode warn: the same results, exit 0", only("team.js"), docs(configMap("a", "x", ""), configMap("b", "", "")), Options{Mode: ModeWarn}, 0, []string{
			"a #1 admitted", "  team.js validate pass", "b #2 refused", "  team.js validate deny: configmap b needs a team label",
		}},
		{"mode audit: exit 0", only("team.js"), configMap("b", "", ""), Options{Mode: ModeAudit}, 0, []string{
			"b #1 refused", "  team.js validate deny: configmap b needs a team label",
		}},
		{"--only runs the scripts named", policies, configMap("b", "", "k"), Options{Only: []string{"./owner.js"}}, 0, []string{
			"b #1 admitted", "  owner.js mutate mutate " + ownerPatch,
		}},
		{"--only naming no plugin, or no admission script", policies, configMap("b", "", ""), Options{Only: []string{"nope.js", "handler.js"}}, 2, []string{
			"problem script nope.js: no such plugin in DIR", "problem script handler.js: defines neither validate nor mutate",
		}},
		{"--gvr for a script without a watch", map[string]string{"nowatch.js": "export default { validate(o) { return { allowed: false, message: \"no \" + o.kind }; } };\n"},
			configMap("a", "", ""), Options{Resources: []string{"configmaps"}}, 1, []string{"a #1 refused", "  nowatch.js validate deny: no ConfigMap"}},
		{"no document at all", only("team.js"), "# nothing\n", Options{}, 2, []string{
			"problem check: no manifests in the input: the files and stdin hold no document",
		}},
		{"a script that throws is an error", only("team.js"), configMap("a", "boom", ""), Options{}, 2, []string{
			"a #1 refused", "  team.js validate error: team.js validate failed: team.js:7:",
		}},
		{"a script that does not load: nothing is checked", map[string]string{"team.js": policies["team.js"], "bad.js": "export default {\n  watch: \"v1/configmaps\",\n  validate(cm) { return ; }}\n}\n"},
			docs(configMap("a", "", ""), "kind: X\n"), Options{}, 2, []string{"problem script bad.js: not loaded: bad.js:4:",
				"problem manifests.yaml, document 2: not a manifest: no apiVersion"}},
		{"a script whose watch is unknown", map[string]string{"w.js": `export default { watch: "example.com/v1/gadgets", validate() {} };`},
			configMap("a", "", ""), Options{}, 2, []string{"problem script w.js: not loaded: "}},
		{"no admission script", map[string]string{"handler.js": policies["handler.js"]}, configMap("a", "", ""), Options{}, 2, []string{
			"problem check: no admission script in DIR: no plugin there defines validate or mutate",
		}},
		{"unknown resources, with the nearest kind", only("team.js"),
			docs("apiVersion: apps/v1\nkind: Deploymnet\nmetadata: {name: a}\n", "apiVersion: apps/v1beta1\nkind: Deployment\nmetadata: {name: b}\n",
				"apiVersion: v1\nkind: configmap\nmetadata: {name: c}\n", "apiVersion: example.com/v1\nkind: Gizmo\nmetadata: {name: d}\n", "apiVersion: a/b/c\nkind: X\n",
				configMap("e", "x", "")), Options{}, 2, []string{
				"problem manifests.yaml, document 1: unknown resource: apps/v1 Deploymnet is not served (the built-in resources of Kubernetes v1.37.2, and the CRDs of the input); did you mean apps/v1 Deployment?",
				"problem manifests.yaml, document 2: unknown resource: apps/v1beta1 Deployment is not served (the built-in resources of Kubernetes v1.37.2, and the CRDs of the input); did you mean apps/v1 Deployment?",
				"problem manifests.yaml, document 3: unknown resource: v1 configmap is not served (the built-in resources of Kubernetes v1.37.2, and the CRDs of the input); did you mean v1 ConfigMap?",
				"problem manifests.yaml, document 4: unknown resource: example.com/v1 Gizmo is not served (the built-in resources of Kubernetes v1.37.2, and the CRDs of the input)",
				`problem manifests.yaml, document 5: invalid apiVersion "a/b/c": unexpected GroupVersion string: a/b/c`,
				"e #6 admitted", "  team.js validate pass",
			}},
		{"invalid documents are problems; the others are checked", only("team.js"),
			docs(configMap("a", "x", ""), "kind: ConfigMap\nmetadata: {name: b}\n", "a: [\n", configMap("c", "", "")), Options{}, 2, []string{
				"problem manifests.yaml, document 2: not a manifest: no apiVersion",
				"problem manifests.yaml, document 3: invalid YAML: line 10: did not find expected node content",
				"a #1 admitted", "  team.js validate pass", "c #4 refused", "  team.js validate deny: configmap c needs a team label",
			}},
		{"a duplicate", only("team.js"), docs(configMap("a", "x", ""), configMap("a", "y", "")), Options{}, 2, []string{
			"problem manifests.yaml, document 2: duplicate: ConfigMap default/a is also in manifests.yaml, document 1",
			"a #1 admitted", "  team.js validate pass",
		}},
		{"a namespace declared after its objects", only("team.js"),
			docs(strings.Replace(configMap("a", "x", ""), "name: a", "name: a\n  namespace: late", 1), "apiVersion: v1\nkind: Namespace\nmetadata: {name: late}\n"),
			Options{}, 2, []string{
				"problem manifests.yaml, document 1: namespace late does not exist yet: it is created by manifests.yaml, document 2, later in the input; put the Namespace first",
				"late #2 admitted",
			}},
		{"a namespace the input names without declaring it, and one a fresh cluster has", only("team.js"),
			docs(strings.Replace(configMap("a", "x", ""), "name: a", "name: a\n  namespace: elsewhere", 1), "apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n"),
			Options{}, 0, []string{"a #1 admitted", "  team.js validate pass", "default #2 admitted"}},
		{"a CRD of the input: a script may watch its resource, its objects resolve", widgetPolicy,
			docs(crd, widget("small", 1), widget("big", 5)), Options{}, 1, []string{
				"widgets.example.com #1 admitted", "small #2 admitted", "  size.js validate pass", "big #3 refused", "  size.js validate deny: too big",
			}},
		{"namespaces selected by the labels of the input's Namespaces; one it does not declare has none", map[string]string{"sel.js": `export default {
  watch: "v1/configmaps",
  validate(cm) { if (!cm.metadata.labels?.team) return { allowed: false, message: "no team" }; },
  admission: { namespaceSelector: { matchLabels: { policy: "on" } }, excludeNamespaces: ["legacy"] },
};
`}, docs("apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, labels: {policy: \"on\"}}\n",
			"apiVersion: v1\nkind: Namespace\nmetadata: {name: legacy, labels: {policy: \"on\"}}\n",
			strings.Replace(configMap("a", "", ""), "name: a", "name: a\n  namespace: shop", 1),
			strings.Replace(configMap("b", "", ""), "name: b", "name: b\n  namespace: legacy", 1),
			strings.Replace(configMap("c", "", ""), "name: c", "name: c\n  namespace: undeclared", 1)),
			Options{}, 1, []string{"shop #1 admitted", "legacy #2 admitted", "a #3 refused", "  sel.js validate deny: no team", "b #4 admitted", "c #5 admitted"}},
		{"the scripts' handlers run dry-run: the objects stay", only("handler.js", "unique.js"), docs(configMap("a", "x", "k"), configMap("b", "x", "k")), Options{}, 1, []string{
			"a #1 admitted", "  unique.js validate pass", "b #2 refused", "  unique.js validate deny: key k is taken by default/a",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep, dir := runCheck(t, tt.scripts, tt.manifests, tt.opts)
			got := lines(rep)
			for i := range got {
				got[i] = strings.ReplaceAll(got[i], dir, "DIR")
			}
			if len(got) != len(tt.want) {
				t.Fatalf("report:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("line %d = %q, want a line starting %q", i, got[i], tt.want[i])
				}
			}
			if code := rep.ExitCode(); code != tt.code {
				t.Errorf("exit code %d, want %d", code, tt.code)
			}
		})
	}
}
