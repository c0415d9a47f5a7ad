package typegen

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Resource is one resource to generate an interface for, as discovery describes it.
type Resource struct {
	Group, Version, Resource, Kind string
	Namespaced                     bool
	// Preferred marks the storage (or else the preferred) version of its group: when several
	// resources of one kind are generated, it keeps the kind's plain name.
	Preferred bool
}

// String is the --gvr spelling: apps/v1/deployments, v1/pods.
func (r Resource) String() string {
	return strings.TrimPrefix(r.Group+"/"+r.Version+"/"+r.Resource, "/")
}

func (r Resource) apiVersion() string { return strings.TrimPrefix(r.Group+"/"+r.Version, "/") }

// Source returns the OpenAPI v3 document of a group version, by its path under /openapi/v3:
// "api/v1" for the core group, "apis/apps/v1" for others.
type Source func(path string) ([]byte, error)

// DocumentPath is the path Source is asked for to describe group/version.
func DocumentPath(group, version string) string {
	if group == "" {
		return "api/" + version
	}
	return "apis/" + group + "/" + version
}

// objectMeta is the component every resource's metadata refers to.
const objectMeta = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

// ErrNoSchema is wrapped by Generate's error when the cluster publishes no schema for a kind.
var ErrNoSchema = errors.New("no OpenAPI schema")

// generator collects the schemas to write; it lives for one Generate call.
type generator struct {
	src     Source
	docs    map[string]*document
	schemas map[string]*schema  // every component to write, by full name
	roots   map[string]Resource // the components that are requested resources
	order   []string            // roots in the order requested
	names   map[string]string   // component full name -> TypeScript name

	taken     map[string]bool          // every TypeScript name given
	nested    map[*schema]string       // named nested shapes
	nestedOf  map[string][]*nestedType // by the component they are in
	visited   []*nestedType            // all of them, in the order they were named
	byKey     map[string]string        // nested shape key -> name of its first declaration
	canonical map[string]string        // nested name -> name of its first declaration
	keying    bool                     // writing a key: no comments, canonical names
}

// Module is a generated TypeScript module.
type Module struct {
	// Names are the interface names of the resources, in the order they were given.
	Names []string
	g     *generator
}

// Generate reads the schemas of resources and every schema they refer to, and names them
// (see names.go).
func Generate(src Source, resources []Resource) (*Module, error) {
	g := &generator{src: src, docs: map[string]*document{}, schemas: map[string]*schema{}, roots: map[string]Resource{},
		nested: map[*schema]string{}, nestedOf: map[string][]*nestedType{}, byKey: map[string]string{}, canonical: map[string]string{}}
	fulls := make([]string, 0, len(resources))
	for _, r := range resources {
		full, err := g.addRoot(r)
		if err != nil {
			return nil, err
		}
		fulls = append(fulls, full)
	}
	g.names = rootNames(g.order, g.roots)
	g.taken = map[string]bool{jsonValue: true}
	for _, n := range g.names {
		g.taken[n] = true
	}
	for _, full := range g.order { // named after the resources, and as stable
		g.nameNested(full)
	}
	others := slices.DeleteFunc(slices.Sorted(maps.Keys(g.schemas)), func(n string) bool { _, root := g.roots[n]; return root })
	for full, n := range uniqueNames(others, g.taken) {
		g.names[full] = n
		g.taken[n] = true
	}
	for _, full := range g.components() {
		g.nameNested(full)
	}
	g.dedupe()
	m := &Module{g: g}
	for _, full := range fulls {
		m.Names = append(m.Names, g.names[full])
	}
	return m, nil
}

// components are the schemas that are not resources, by TypeScript name.
func (g *generator) components() []string {
	others := slices.DeleteFunc(slices.Collect(maps.Keys(g.schemas)), func(n string) bool { _, root := g.roots[n]; return root })
	slices.SortFunc(others, func(a, b string) int { return strings.Compare(g.names[a], g.names[b]) })
	return others
}

// addRoot adds resource r and returns its component's full name.
func (g *generator) addRoot(r Resource) (string, error) {
	path := DocumentPath(r.Group, r.Version)
	doc, err := g.document(path)
	if err != nil {
		return "", err
	}
	name, ok := doc.forKind(r.Group, r.Version, r.Kind)
	if !ok {
		return "", fmt.Errorf("generate types for %s: %w for kind %s in /openapi/v3/%s "+
			"(a CustomResourceDefinition needs a structural schema)", r, ErrNoSchema, r.Kind, path)
	}
	if _, dup := g.roots[name]; dup {
		return name, nil
	}
	g.roots[name] = r
	g.order = append(g.order, name)
	g.collect(doc, name)
	if _, ok := doc.Components.Schemas[objectMeta]; ok {
		g.collect(doc, objectMeta) // the roots' metadata is typed with it, even if not referenced
	}
	return name, nil
}

func (g *generator) document(path string) (*document, error) {
	if d, ok := g.docs[path]; ok {
		return d, nil
	}
	data, err := g.src(path)
	if err != nil {
		return nil, fmt.Errorf("read /openapi/v3/%s: %w", path, err)
	}
	d, err := parseDocument(path, data)
	if err != nil {
		return nil, err
	}
	g.docs[path] = d
	return d, nil
}

// collect adds the component name of doc and everything it refers to. Documents of different
// group versions repeat shared components (ObjectMeta, ...) under the same name: the first is
// kept.
func (g *generator) collect(doc *document, name string) {
	if _, done := g.schemas[name]; done {
		return
	}
	s, ok := doc.Components.Schemas[name]
	if !ok {
		return // a dangling reference is typed as any
	}
	g.schemas[name] = s
	walk(s, func(ref string) { g.collect(doc, ref) })
}

// walk calls visit for every component s refers to, directly or through inline schemas.
func walk(s *schema, visit func(string)) {
	if s == nil {
		return
	}
	if name := refName(s.Ref); name != "" {
		visit(name)
	}
	for _, p := range s.Properties {
		walk(p, visit)
	}
	walk(s.Items, visit)
	if s.AdditionalProperties != nil {
		walk(s.AdditionalProperties.schema, visit)
	}
	for _, list := range [][]*schema{s.AllOf, s.AnyOf, s.OneOf} {
		for _, sub := range list {
			walk(sub, visit)
		}
	}
}
