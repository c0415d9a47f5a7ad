package typegen

import (
	"fmt"
	"slices"
	"strings"
)

// Bytes renders the module under a comment made of header's lines: the resources in the
// order requested, the other schemas by name, each followed by its nested shapes, then
// JsonValue.
func (m *Module) Bytes(header string) []byte {
	g := m.g
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(header, "\n"), "\n") {
		b.WriteString(strings.TrimRight("// "+line, " ") + "\n")
	}
	for _, name := range g.order {
		b.WriteString("\n")
		g.emitRoot(&b, name, g.roots[name])
		g.emitNested(&b, name)
	}
	for _, name := range g.components() {
		b.WriteString("\n")
		g.emitComponent(&b, name)
		g.emitNested(&b, name)
	}
	b.WriteString("\n" + jsonValueDecl)
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
	g.writeDoc(b, "", doc)
	metaType := "{ [field: string]: " + jsonValue + " }" // a document without ObjectMeta: unusual, but typed
	if n, ok := g.names[objectMeta]; ok {
		metaType = n
	}
	fixed := map[string]string{
		"apiVersion": quote(r.apiVersion()),
		"kind":       quote(r.Kind),
		"metadata":   metaType + " & " + meta,
	}
	fmt.Fprintf(b, "export interface %s ", g.names[name])
	g.writeObject(b, bare(s), "", fixed)
	b.WriteString("\n")
}

func (g *generator) emitComponent(b *strings.Builder, name string) {
	s := g.schemas[name]
	g.writeDoc(b, "", s.Description)
	if plainObject(s) {
		fmt.Fprintf(b, "export interface %s ", g.names[name])
		g.writeObject(b, s, "", nil)
		b.WriteString("\n")
		return
	}
	fmt.Fprintf(b, "export type %s = %s;\n", g.names[name], g.tsType(s, ""))
}

// emitNested writes the nested shapes named inside the component full, by name.
func (g *generator) emitNested(b *strings.Builder, full string) {
	list := g.nestedOf[full]
	byName := make(map[string]*nestedType, len(list))
	names := make([]string, 0, len(list))
	for _, nt := range list {
		byName[nt.name] = nt
		names = append(names, nt.name)
	}
	slices.Sort(names)
	for _, n := range names {
		nt := byName[n]
		b.WriteString("\n")
		if nt.same != "" {
			fmt.Fprintf(b, "export type %s = %s;\n", nt.name, nt.same)
			continue
		}
		fmt.Fprintf(b, "export interface %s ", nt.name)
		g.writeObject(b, nt.schema, "", nil)
		b.WriteString("\n")
	}
}

// isObject reports schemas written as an interface: objects with named properties.
func isObject(s *schema) bool {
	return len(s.Properties) > 0 && (s.Type == "object" || s.Type == "")
}

// writeDoc writes text as a JSDoc comment at indent (nothing while writing a key).
func (g *generator) writeDoc(b *strings.Builder, indent, text string) {
	text = strings.TrimSpace(strings.ReplaceAll(text, "*/", "*\\/"))
	if text == "" || g.keying {
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
