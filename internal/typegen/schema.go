package typegen

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// schema is the subset of an OpenAPI v3 schema object (with Kubernetes' extensions) that
// becomes TypeScript.
type schema struct {
	Ref                  string             `json:"$ref"`
	Type                 string             `json:"type"`
	Format               string             `json:"format"`
	Description          string             `json:"description"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	Items                *schema            `json:"items"`
	AdditionalProperties *additional        `json:"additionalProperties"`
	AllOf                []*schema          `json:"allOf"`
	AnyOf                []*schema          `json:"anyOf"`
	OneOf                []*schema          `json:"oneOf"`
	Enum                 []json.RawMessage  `json:"enum"`
	Nullable             bool               `json:"nullable"`
	IntOrString          bool               `json:"x-kubernetes-int-or-string"`
	PreserveUnknown      bool               `json:"x-kubernetes-preserve-unknown-fields"`
	GVK                  []gvk              `json:"x-kubernetes-group-version-kind"`
}

type gvk struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// additional is additionalProperties: a schema, or a boolean.
type additional struct {
	schema  *schema
	allowed bool
}

func (a *additional) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("true")) || bytes.Equal(bytes.TrimSpace(b), []byte("false")) {
		a.allowed = bytes.Equal(bytes.TrimSpace(b), []byte("true"))
		return nil
	}
	a.allowed = true
	return json.Unmarshal(b, &a.schema)
}

// document is an OpenAPI v3 document; only its component schemas matter.
type document struct {
	Components struct {
		Schemas map[string]*schema `json:"schemas"`
	} `json:"components"`
}

func parseDocument(path string, data []byte) (*document, error) {
	var d document
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("read OpenAPI document %s: %w", path, err)
	}
	return &d, nil
}

const refPrefix = "#/components/schemas/"

// refName is the component a $ref names, or "" for a reference this package does not follow.
func refName(ref string) string {
	if len(ref) > len(refPrefix) && ref[:len(refPrefix)] == refPrefix {
		return ref[len(refPrefix):]
	}
	return ""
}

// forKind returns the name of the component describing group/version/kind.
func (d *document) forKind(group, version, kind string) (string, bool) {
	for name, s := range d.Components.Schemas {
		for _, g := range s.GVK {
			if g.Group == group && g.Version == version && g.Kind == kind {
				return name, true
			}
		}
	}
	return "", false
}
