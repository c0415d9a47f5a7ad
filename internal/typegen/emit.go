package typegen

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// emit renders the module: the header, the resources in the order requested, then the other
// schemas by name.
func (g *generator) emit(header string) []byte {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(header, "\n"), "\n") {
		b.WriteString(strings.TrimRight("// "+line, " ") + "\n")
	}
	for _, name := range g.order {
		b.WriteString("\n")
		g.emitRoot(&b, name, g.roots[name])
	}
	others := slices.DeleteFunc(slices.Collect(maps.Keys(g.schemas)), func(n string) bool { _, root := g.roots[n]; return root })
	slices.SortFunc(others, func(a, b string) int { return strings.Compare(g.names[a], g.names[b]) })
	for _, name := range others {
		b.WriteString("\n")
		g.emitComponent(&b, name)
	}
	return []byte(b.String())
}

// emitRoot writes a resource's interface: its schema, with apiVersion and kind as literals and
// the metadata the server always sets required.
func (g *generator) emitRoot(b *strings.Builder, name string, r Resource) {
	s := g.schemas[name]
	scope := "cluster-scoped"
	meta := "{ name: string }"
	if r.Namespaced {
		scope, meta = "namespaced", "{ name: string; namespace: string }"
	}
	doc := strings.TrimSpace(s.Description + "\n\nResource " + r.String() + " (" + scope + ").")
	writeDoc(b, "", doc)
	metaType := "{ [field: string]: any }" // a document without ObjectMeta: unusual, but typed
	if n, ok := g.names[objectMeta]; ok {
		metaType = n
	}
	fixed := map[string]string{
		"apiVersion": quote(r.apiVersion()),
		"kind":       quote(r.Kind),
		"metadata":   metaType + " & " + meta,
	}
	fmt.Fprintf(b, "export interface %s ", g.names[name])
	g.writeObject(b, s, "", fixed)
	b.WriteString("\n")
}

func (g *generator) emitComponent(b *strings.Builder, name string) {
	s := g.schemas[name]
	writeDoc(b, "", s.Description)
	if isObject(s) {
		fmt.Fprintf(b, "export interface %s ", g.names[name])
		g.writeObject(b, s, "", nil)
		b.WriteString("\n")
		return
	}
	fmt.Fprintf(b, "export type %s = %s;\n", g.names[name], g.tsType(s, ""))
}

// isObject reports schemas written as an interface: objects with named properties.
func isObject(s *schema) bool {
	return len(s.Properties) > 0 && (s.Type == "object" || s.Type == "")
}

// writeObject writes an object type literal for s at indent; fixed overrides (or adds)
// properties, which are then required.
func (g *generator) writeObject(b *strings.Builder, s *schema, indent string, fixed map[string]string) {
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	props := slices.Sorted(maps.Keys(s.Properties))
	for p := range fixed {
		if _, ok := s.Properties[p]; !ok {
			props = append(props, p)
		}
	}
	slices.Sort(props)
	inner := indent + "  "
	b.WriteString("{\n")
	for _, p := range props {
		ps := s.Properties[p]
		typ, opt := "", "?"
		if t, ok := fixed[p]; ok {
			typ, opt = t, ""
		} else {
			typ = g.tsType(ps, inner)
			if required[p] {
				opt = ""
			}
		}
		if ps != nil {
			writeDoc(b, inner, ps.Description)
		}
		fmt.Fprintf(b, "%s%s%s: %s;\n", inner, propertyName(p), opt, typ)
	}
	if extra := g.indexSignature(s, inner, len(props) > 0); extra != "" {
		fmt.Fprintf(b, "%s[key: string]: %s;\n", inner, extra)
	}
	b.WriteString(indent + "}")
}

// indexSignature is the type of keys beyond the named properties, or "" when there are none.
// Beside named properties it must admit theirs, hence unknown.
func (g *generator) indexSignature(s *schema, indent string, hasProps bool) string {
	var t string
	switch {
	case s.AdditionalProperties != nil && s.AdditionalProperties.schema != nil:
		t = g.tsType(s.AdditionalProperties.schema, indent)
	case s.PreserveUnknown || (s.AdditionalProperties != nil && s.AdditionalProperties.allowed):
		t = "any"
	case !hasProps:
		t = "any" // an object of unknown shape
	default:
		return ""
	}
	if hasProps && t != "any" {
		return "unknown"
	}
	return t
}

// tsType renders a schema used at indent as a TypeScript type.
func (g *generator) tsType(s *schema, indent string) string {
	if s == nil {
		return "any"
	}
	t := g.baseType(s, indent)
	if s.Nullable && t != "any" {
		t += " | null"
	}
	return t
}

func (g *generator) baseType(s *schema, indent string) string {
	if s.Ref != "" {
		if n, ok := g.names[refName(s.Ref)]; ok {
			return n
		}
		return "any"
	}
	switch {
	case s.IntOrString || s.Format == "int-or-string":
		return "number | string"
	case len(s.AllOf) > 0:
		return g.combine(s.AllOf, " & ", indent)
	case len(s.OneOf) > 0:
		return g.combine(s.OneOf, " | ", indent)
	case len(s.AnyOf) > 0:
		return g.combine(s.AnyOf, " | ", indent)
	case len(s.Enum) > 0:
		return enumType(s.Enum)
	}
	switch s.Type {
	case "string":
		return "string"
	case "integer", "number":
		return "number"
	case "boolean":
		return "boolean"
	case "array":
		return arrayOf(g.tsType(s.Items, indent))
	case "object", "":
		if s.Type == "" && len(s.Properties) == 0 && s.AdditionalProperties == nil && !s.PreserveUnknown {
			return "any" // no type at all: anything goes
		}
		var b strings.Builder
		if len(s.Properties) == 0 {
			return "{ [key: string]: " + g.indexSignature(s, indent, false) + " }"
		}
		g.writeObject(&b, s, indent, nil)
		return b.String()
	}
	return "any"
}

func (g *generator) combine(list []*schema, sep, indent string) string {
	var parts []string
	for _, sub := range list {
		t := g.tsType(sub, indent)
		if strings.Contains(t, " ") && !strings.HasPrefix(t, "{") {
			t = "(" + t + ")"
		}
		if !slices.Contains(parts, t) {
			parts = append(parts, t)
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts, sep)
}

func arrayOf(elem string) string {
	if strings.Contains(elem, " | ") || strings.Contains(elem, " & ") {
		return "(" + elem + ")[]"
	}
	return elem + "[]"
}

// enumType is the union of an enum's values, as JSON literals are valid TypeScript literals.
func enumType(values []json.RawMessage) string {
	parts := make([]string, 0, len(values))
	for _, v := range values {
		lit := strings.TrimSpace(string(v))
		if strings.HasPrefix(lit, "{") || strings.HasPrefix(lit, "[") {
			return "any" // an object or array value has no literal type
		}
		if !slices.Contains(parts, lit) {
			parts = append(parts, lit)
		}
	}
	return strings.Join(parts, " | ")
}

var identifierRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

func propertyName(p string) string {
	if identifierRE.MatchString(p) {
		return p
	}
	return quote(p)
}

func quote(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// writeDoc writes text as a JSDoc comment at indent.
func writeDoc(b *strings.Builder, indent, text string) {
	text = strings.TrimSpace(strings.ReplaceAll(text, "*/", "*\\/"))
	if text == "" {
		return
	}
	lines := strings.Split(text, "\n")
	if len(lines) == 1 {
		fmt.Fprintf(b, "%s/** %s */\n", indent, lines[0])
		return
	}
	b.WriteString(indent + "/**\n")
	for _, l := range lines {
		fmt.Fprintf(b, "%s%s\n", indent, strings.TrimRight(" * "+l, " "))
	}
	b.WriteString(indent + " */\n")
}
