package typegen

import (
	"maps"
	"slices"
	"strings"
)

// Nested object shapes (a CRD's spec, its spec.source, each element of spec.endpoints) are
// named after the type they are in and the path to them: Application's spec.source is
// ApplicationSpecSource, the elements of ServiceMonitor's spec.endpoints are
// ServiceMonitorSpecEndpoints. Scripts and their helpers can name them, and a shape repeated
// elsewhere (ApplicationSet's template repeats Application's spec) is declared once: its other
// names are aliases of the first.

// nestedType is a named nested shape.
type nestedType struct {
	name   string
	schema *schema
	same   string // the name of an identical shape declared before it, or ""
}

// nameNested names the nested shapes of the top-level schema full (a resource or component).
func (g *generator) nameNested(full string) {
	g.visitChildren(full, g.schemas[full], g.names[full])
}

func (g *generator) visitChildren(top string, s *schema, path string) {
	for _, p := range slices.Sorted(maps.Keys(s.Properties)) {
		g.visit(top, s.Properties[p], path+identifier(p))
	}
	g.visit(top, s.Items, path)
	if s.AdditionalProperties != nil {
		g.visit(top, s.AdditionalProperties.schema, path+"Value")
	}
	for _, list := range [][]*schema{s.AllOf, s.AnyOf, s.OneOf} {
		for _, b := range shapeBranches(s, list) { // the properties branches add
			for _, p := range slices.Sorted(maps.Keys(b.Properties)) {
				if _, own := s.Properties[p]; !own {
					g.visit(top, b.Properties[p], path+identifier(p))
				}
			}
		}
	}
}

// visit names s, found at path inside top, if it is a plain object shape, after its own
// nested shapes (so that its key refers to their names).
func (g *generator) visit(top string, s *schema, path string) {
	if s == nil || s.Ref != "" {
		return
	}
	g.visitChildren(top, s, path)
	if !plainObject(s) {
		return
	}
	name := free(path, g.taken)
	g.taken[name] = true
	g.nested[s] = name
	g.nestedOf[top] = append(g.nestedOf[top], &nestedType{name: name, schema: s})
	g.visited = append(g.visited, g.nestedOf[top][len(g.nestedOf[top])-1])
}

// dedupe finds the nested shapes that repeat one named before them, once every name is
// given: in the order they were named, so a shape's own nested shapes come first and its key
// can refer to their first declarations.
func (g *generator) dedupe() {
	for _, nt := range g.visited {
		key := g.key(nt.schema)
		if same, ok := g.byKey[key]; ok {
			nt.same = same
			g.canonical[nt.name] = same
		} else {
			g.byKey[key] = nt.name
			g.canonical[nt.name] = nt.name
		}
	}
}

// plainObject reports whether s is typed as one interface: an object with properties whose
// combinators, if any, only validate.
func plainObject(s *schema) bool {
	if !isObject(s) || s.IntOrString {
		return false
	}
	for _, list := range [][]*schema{s.AllOf, s.AnyOf, s.OneOf} {
		if len(shapeBranches(s, list)) > 0 {
			return false
		}
	}
	return true
}

// key is what makes two shapes the same type: s written without its comments, its nested
// shapes by the names of their first declarations.
func (g *generator) key(s *schema) string {
	var b strings.Builder
	g.keying = true
	g.writeObject(&b, s, "", nil)
	g.keying = false
	return b.String()
}
