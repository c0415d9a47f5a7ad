package typegen

import (
	"strings"
	"testing"
)

// source is Argo CD's Application source in miniature: repeated by Application's spec and,
// through a template, by ApplicationSet's.
const source = `{"type": "object", "required": ["repoURL"], "properties": {"repoURL": {"type": "string"}, "targetRevision": {"type": "string"},
	"helm": {"type": "object", "properties": {"valuesObject": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}`

var (
	applications    = Resource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications", Kind: "Application", Namespaced: true}
	applicationSets = Resource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applicationsets", Kind: "ApplicationSet", Namespaced: true}
	argoSource      = documents(map[string][]string{"apis/argoproj.io/v1alpha1": {
		crdComponent("argoproj.io", "v1alpha1", "Application", `{"type": "object", "properties": {
			"source": `+source+`, "sources": {"type": "array", "items": `+source+`}}}`),
		crdComponent("argoproj.io", "v1alpha1", "ApplicationSet", `{"type": "object", "properties": {
			"template": {"type": "object", "properties": {"spec": {"type": "object", "description": "documented here only", "properties": {
				"source": `+source+`, "sources": {"type": "array", "items": `+source+`}}}}}}}`),
	}})
)

// TestNestedShapesNamedOnce: nested shapes are named by their path, and a shape seen before is
// an alias of its first name, declared once.
func TestNestedShapesNamedOnce(t *testing.T) {
	t.Parallel()
	out, err := generate(argoSource, []Resource{applications, applicationSets}, "")
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, want := range []string{
		"export interface Application {\n",
		"  spec?: ApplicationSpec;\n",
		"export interface ApplicationSpec {\n  source?: ApplicationSpecSource;\n  sources?: ApplicationSpecSources[];\n}\n",
		"export interface ApplicationSpecSource {\n  helm?: ApplicationSpecSourceHelm;\n  repoURL: string;\n  targetRevision?: string;\n}\n",
		"export interface ApplicationSpecSourceHelm {\n  valuesObject?: { [key: string]: JsonValue };\n}\n",
		"export type ApplicationSpecSources = ApplicationSpecSource;\n",
		"export type ApplicationSpecSourcesHelm = ApplicationSpecSourceHelm;\n",
		"export interface ApplicationSetSpecTemplate {\n  /** documented here only */\n  spec?: ApplicationSetSpecTemplateSpec;\n}\n",
		// the same shape whatever its comments
		"export type ApplicationSetSpecTemplateSpec = ApplicationSpec;\n",
		"export type ApplicationSetSpecTemplateSpecSource = ApplicationSpecSource;\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the output lacks %q", want)
		}
	}
	if n := strings.Count(got, "targetRevision?: string;"); n != 1 {
		t.Errorf("targetRevision declared %d times, want once:\n%s", n, got)
	}
}
