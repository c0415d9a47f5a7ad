package typegen

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// crdComponent is a custom resource's component as kube-apiserver publishes it: named by the
// reversed group, the version and the kind, with its group-version-kind.
func crdComponent(group, version, kind, spec string) string {
	labels := strings.Split(group, ".")
	slices.Reverse(labels)
	return `"` + strings.Join(labels, ".") + "." + version + "." + kind + `": {"type": "object",
		"x-kubernetes-group-version-kind": [{"group": "` + group + `", "version": "` + version + `", "kind": "` + kind + `"}],
		"properties": {"metadata": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}, "spec": ` + spec + `}}`
}

// documents serves the given documents, each made of components and the apimachinery
// components (ObjectMeta, ...) of a recorded CRD document, as every CRD document has them; and
// the recorded documents.
func documents(docs map[string][]string) Source {
	return func(path string) ([]byte, error) {
		c, ok := docs[path]
		if !ok {
			return recordedSource(path)
		}
		data, err := recordedSource("apis/example.com/v1")
		if err != nil {
			return nil, err
		}
		var recorded struct {
			Components struct {
				Schemas map[string]json.RawMessage `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(data, &recorded); err != nil {
			return nil, err
		}
		for name, s := range recorded.Components.Schemas {
			if strings.HasPrefix(name, "io.k8s.apimachinery.") {
				c = append(c, quote(name)+": "+string(s))
			}
		}
		return []byte(`{"components": {"schemas": {` + strings.Join(c, ",\n") + `}}}`), nil
	}
}

var (
	probes  = Resource{Group: "monitoring.coreos.com", Version: "v1", Resource: "probes", Kind: "Probe", Namespaced: true}
	vsV1    = Resource{Group: "networking.istio.io", Version: "v1", Resource: "virtualservices", Kind: "VirtualService", Namespaced: true}
	vsBeta  = Resource{Group: "networking.istio.io", Version: "v1beta1", Resource: "virtualservices", Kind: "VirtualService", Namespaced: true}
	pods    = Resource{Group: "custom.example.com", Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true}
	events  = Resource{Group: "events.example.com", Version: "v1", Resource: "events", Kind: "Event", Namespaced: true}
	events2 = Resource{Group: "audit.example.com", Version: "v1alpha1", Resource: "events", Kind: "Event"}

	namingSource = documents(map[string][]string{
		"apis/monitoring.coreos.com/v1": {crdComponent("monitoring.coreos.com", "v1", "Probe", `{"type": "object", "properties": {"interval": {"type": "string"}}}`)},
		"apis/networking.istio.io/v1":   {crdComponent("networking.istio.io", "v1", "VirtualService", `{"type": "object", "properties": {"hosts": {"type": "array", "items": {"type": "string"}}}}`)},
		"apis/networking.istio.io/v1beta1": {crdComponent("networking.istio.io", "v1beta1", "VirtualService",
			`{"type": "object", "properties": {"hosts": {"type": "array", "items": {"type": "string"}}}}`)},
		"apis/custom.example.com/v1":      {crdComponent("custom.example.com", "v1", "Pod", `{"type": "object", "properties": {"image": {"type": "string"}}}`)},
		"apis/events.example.com/v1":      {crdComponent("events.example.com", "v1", "Event", `{"type": "object", "properties": {"note": {"type": "string"}}}`)},
		"apis/audit.example.com/v1alpha1": {crdComponent("audit.example.com", "v1alpha1", "Event", `{"type": "object", "properties": {"note": {"type": "string"}}}`)},
	})
)

func preferred(r Resource) Resource { r.Preferred = true; return r }

// TestResourceNames: a resource is named after its kind, whatever else is generated; what
// collides with it is renamed.
func TestResourceNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		resources []Resource
		want      []string
		also      []string // other declarations the output must have
	}{
		{"a kind alone", []Resource{probes}, []string{"Probe"}, nil},
		{"a kind a built-in schema also has", []Resource{probes, deployments}, []string{"Probe", "Deployment"},
			[]string{"export interface CoreV1Probe {", "  livenessProbe?: CoreV1Probe;"}},
		{"the built-in first", []Resource{deployments, probes}, []string{"Deployment", "Probe"}, []string{"export interface CoreV1Probe {"}},
		{"two versions, the preferred last", []Resource{vsBeta, preferred(vsV1)}, []string{"V1beta1VirtualService", "VirtualService"},
			[]string{"  apiVersion: \"networking.istio.io/v1beta1\";"}},
		{"two versions, the preferred first", []Resource{preferred(vsV1), vsBeta}, []string{"VirtualService", "V1beta1VirtualService"}, nil},
		{"two versions, none preferred: the first", []Resource{vsBeta, vsV1}, []string{"VirtualService", "V1VirtualService"}, nil},
		{"one kind in two groups", []Resource{events, events2}, []string{"Event", "AuditV1alpha1Event"}, nil},
		{"a nested shape's name a built-in schema also has", []Resource{deployments, pods}, []string{"Deployment", "Pod"},
			[]string{"  spec?: PodSpec;", "export interface PodSpec {\n  image?: string;\n}", "export interface CoreV1PodSpec {", "  spec?: CoreV1PodSpec;"}},
		{"a resource given twice", []Resource{probes, probes}, []string{"Probe", "Probe"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := Generate(namingSource, tt.resources)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(m.Names, tt.want) {
				t.Errorf("names %q, want %q", m.Names, tt.want)
			}
			out := string(m.Bytes(""))
			for i, r := range tt.resources {
				decl := regexp.MustCompile(`(?m)^export interface ` + m.Names[i] + ` \{\n(?:.*\n)*?  apiVersion: "` + regexp.QuoteMeta(r.apiVersion()) + `";\n`)
				if !decl.MatchString(out) {
					t.Errorf("%s is not declared as the interface of %s", m.Names[i], r)
				}
			}
			for _, want := range tt.also {
				if !strings.Contains(out, want+"\n") {
					t.Errorf("the output lacks %q", want)
				}
			}
		})
	}
}

// exported are the names a module exports.
func exported(out []byte) []string {
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^export (?:interface|type) (\w+)`).FindAllSubmatch(out, -1) {
		names = append(names, string(m[1]))
	}
	return names
}

// TestNamesStableWhenAResourceIsAdded: every name a generation exports for its resources and
// their nested shapes is exported, for the same thing, when another resource is added, before
// or after.
func TestNamesStableWhenAResourceIsAdded(t *testing.T) {
	t.Parallel()
	for _, base := range []Resource{probes, widgets, vsBeta, pods} {
		alone, err := generate(namingSource, []Resource{base}, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, added := range []Resource{deployments, probes, widgets, preferred(vsV1), events} {
			if added.Kind == base.Kind && added.Group == base.Group && added.Version == base.Version {
				continue
			}
			for _, list := range [][]Resource{{base, added}, {added, base}} {
				both, err := generate(namingSource, list, "")
				if err != nil {
					t.Fatal(err)
				}
				names := exported(both)
				for _, n := range exported(alone) {
					if base == vsBeta && added.Kind == "VirtualService" {
						continue // the preferred version takes the plain name: checked in TestResourceNames
					}
					if !slices.Contains(names, n) {
						t.Errorf("%s alone exports %s; with %s added (%s first) it does not", base, n, added, list[0])
					}
				}
			}
		}
	}
}
