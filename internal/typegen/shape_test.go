package typegen

import (
	"fmt"
	"strings"
	"testing"
)

// stringMatch is Istio's StringMatch: typed properties, and a oneOf that only says which one
// may be set.
const stringMatch = `{"type": "object", "properties": {"exact": {"type": "string"}, "prefix": {"type": "string"}, "regex": {"type": "string"}},
	"oneOf": [{"not": {"anyOf": [{"required": ["exact"]}, {"required": ["prefix"]}, {"required": ["regex"]}]}},
		{"required": ["exact"]}, {"required": ["prefix"]}, {"required": ["regex"]}]}`

// TestCombinators: branches that only validate leave the object's type alone; branches that
// add to it give a union (oneOf, anyOf) or an intersection (allOf).
func TestCombinators(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, schema, want string
	}{
		{"oneOf of required-only and not branches", stringMatch,
			"export interface Spec {\n  exact?: string;\n  prefix?: string;\n  regex?: string;\n}"},
		{"anyOf re-declaring properties to validate them (structural CRDs)", `{"type": "object",
			"properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
			"anyOf": [{"properties": {"a": {"minLength": 1}}, "required": ["a"]}, {"required": ["b"]}]}`,
			"export interface Spec {\n  a?: string;\n  b?: number;\n}"},
		{"validation-only allOf", `{"type": "object", "properties": {"a": {"type": "string"}}, "allOf": [{"required": ["a"]}]}`,
			"export interface Spec {\n  a?: string;\n}"},
		{"nested, named as any object", `{"type": "object", "properties": {"uri": ` + stringMatch + `}}`,
			"export interface Spec {\n  uri?: SpecUri;\n}\n\nexport interface SpecUri {\n  exact?: string;\n  prefix?: string;\n  regex?: string;\n}"},
		{"oneOf adding properties", `{"type": "object", "properties": {"name": {"type": "string"}},
			"oneOf": [{"properties": {"url": {"type": "string"}}, "required": ["url"]}, {"properties": {"path": {"type": "string"}}, "required": ["path"]}]}`,
			"export type Spec = {\n  name?: string;\n  url: string;\n} | {\n  name?: string;\n  path: string;\n};"},
		{"anyOf adding properties, or none", `{"type": "object", "properties": {"name": {"type": "string"}},
			"anyOf": [{"properties": {"url": {"type": "string"}}}, {"required": ["name"]}]}`,
			"export type Spec = {\n  name?: string;\n  url?: string;\n} | {\n  name?: string;\n};"},
		{"allOf adding properties", `{"type": "object", "properties": {"a": {"type": "string"}},
			"allOf": [{"properties": {"b": {"type": "string"}}, "required": ["b"]}]}`,
			"export type Spec = {\n  a?: string;\n  b: string;\n};"},
		{"allOf adding a reference", `{"type": "object", "properties": {"a": {"type": "string"}},
			"allOf": [{"$ref": "#/components/schemas/test.v1.Other"}]}`,
			"export type Spec = {\n  a?: string;\n} & Other;"},
		{"oneOf of types", `{"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}`,
			"export type Spec = string | string[];"},
		{"anyOf that only validates, without a type", `{"anyOf": [{"required": ["a"]}]}`,
			"export type Spec = JsonValue;"},
		{"union in an array", `{"type": "array", "items": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}`,
			"export type Spec = (string | number)[];"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := inline(fmt.Sprintf(`, "test.v1.Spec": %s, "test.v1.Other": {"type": "object", "properties": {"o": {"type": "string"}}}`, tt.schema))
			out, err := generate(src, []Resource{{Group: "test.io", Version: "v1", Resource: "things", Kind: "Thing"}}, "")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(out), "\n"+tt.want+"\n") {
				t.Errorf("output:\n%s\nwant it to contain:\n%s", out, tt.want)
			}
		})
	}
}
