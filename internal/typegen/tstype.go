package typegen

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// jsonValue is the type of free-form data: any JSON value. Handler arguments are read-only
// views (View<T> in jsinformer.d.ts), which make it read-only all the way down, as the runtime
// does; util.clone's copy is writable. `any` would get around both.
const (
	jsonValue     = "JsonValue"
	jsonValueDecl = `/**
 * Any JSON value: data a schema leaves free-form (x-kubernetes-preserve-unknown-fields, or no
 * type). In a handler it is read-only, as the object is. Narrow it before use:
 * typeof v === "string", Array.isArray(v), or typeof v === "object" && v !== null && "key" in v.
 */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
`
)

// tsType renders a schema used at indent as a TypeScript type.
func (g *generator) tsType(s *schema, indent string) string {
	if s == nil {
		return jsonValue
	}
	t := g.baseType(s, indent)
	if s.Nullable && t != jsonValue && t != "unknown" {
		t += " | null"
	}
	return t
}

func (g *generator) baseType(s *schema, indent string) string {
	if s.Ref != "" {
		if n, ok := g.names[refName(s.Ref)]; ok {
			return n
		}
		return jsonValue // a dangling reference: still JSON
	}
	if s.IntOrString || s.Format == "int-or-string" {
		return "number | string"
	}
	if n, ok := g.nested[s]; ok {
		if g.keying {
			return g.canonical[n]
		}
		return n
	}
	if !hasOwnShape(s) {
		return g.combinatorsOnly(s, indent)
	}
	own := g.ownType(s, indent)
	if all := shapeBranches(s, s.AllOf); len(all) > 0 {
		own = g.allOfType(s, all, indent)
	}
	var unions []string
	for _, list := range [][]*schema{s.OneOf, s.AnyOf} {
		if len(shapeBranches(s, list)) > 0 {
			unions = append(unions, g.variants(s, list, indent))
		}
	}
	switch len(unions) {
	case 0:
		return own
	case 1:
		return unions[0]
	}
	return "(" + unions[0] + ") & (" + unions[1] + ")"
}

// combinatorsOnly types a schema that has no shape of its own: its combinators', or any JSON
// value when it has none (no type at all) or they only validate.
func (g *generator) combinatorsOnly(s *schema, indent string) string {
	if all := slices.DeleteFunc(slices.Clone(s.AllOf), func(b *schema) bool { return b == nil || !shapes(b) }); len(all) > 0 {
		return g.combine(all, " & ", indent)
	}
	for _, list := range [][]*schema{s.OneOf, s.AnyOf} {
		if len(list) > 0 {
			return g.combine(list, " | ", indent)
		}
	}
	return jsonValue
}

// shapes reports whether b, on its own, says anything about what values look like.
func shapes(b *schema) bool {
	return b.Ref != "" || b.IntOrString || hasOwnShape(b) || len(b.AllOf)+len(b.AnyOf)+len(b.OneOf) > 0
}

// allOfType is s with the allOf branches that add to it: merged as properties when they can
// be, else an intersection.
func (g *generator) allOfType(s *schema, branches []*schema, indent string) string {
	merged := bare(s)
	var parts []string
	for _, b := range branches {
		if mergeable(merged, b) {
			merged = merge(merged, b)
		} else {
			parts = append(parts, g.tsType(b, indent))
		}
	}
	return joinTypes(append([]string{g.ownType(merged, indent)}, parts...), " & ")
}

// variants is the union a oneOf or anyOf over s stands for: s merged with each branch (s
// itself for a branch that only validates).
func (g *generator) variants(s *schema, list []*schema, indent string) string {
	base := bare(s)
	var parts []string
	for _, b := range list {
		switch {
		case b == nil || !addsShape(s, b):
			parts = append(parts, g.ownType(base, indent))
		case mergeable(base, b):
			parts = append(parts, g.ownType(merge(base, b), indent))
		default:
			parts = append(parts, joinTypes([]string{g.ownType(base, indent), g.tsType(b, indent)}, " & "))
		}
	}
	return joinTypes(parts, " | ")
}

// ownType types s by its own keywords, ignoring its combinators.
func (g *generator) ownType(s *schema, indent string) string {
	if len(s.Enum) > 0 {
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
		if len(s.Properties) == 0 {
			if s.Type == "" && s.AdditionalProperties == nil {
				return jsonValue // x-kubernetes-preserve-unknown-fields without a type: any JSON
			}
			return "{ [key: string]: " + g.indexSignature(s, indent, false) + " }"
		}
		var b strings.Builder
		g.writeObject(&b, s, indent, nil)
		return b.String()
	}
	return jsonValue
}

func (g *generator) combine(list []*schema, sep, indent string) string {
	parts := make([]string, 0, len(list))
	for _, sub := range list {
		parts = append(parts, g.tsType(sub, indent))
	}
	return joinTypes(parts, sep)
}

// joinTypes joins distinct types with sep (" | " or " & "), parenthesising compound ones. A
// union with JsonValue in it is JsonValue.
func joinTypes(types []string, sep string) string {
	var distinct []string
	for _, t := range types {
		if sep == " | " && t == jsonValue {
			return jsonValue
		}
		if !slices.Contains(distinct, t) {
			distinct = append(distinct, t)
		}
	}
	if len(distinct) == 1 {
		return distinct[0]
	}
	parts := make([]string, len(distinct))
	for i, t := range distinct {
		if compound(t) {
			t = "(" + t + ")"
		}
		parts[i] = t
	}
	return strings.Join(parts, sep)
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
			g.writeDoc(b, inner, ps.Description)
		}
		fmt.Fprintf(b, "%s%s%s: %s;\n", inner, propertyName(p), opt, typ)
	}
	if extra := g.indexSignature(s, inner, len(props) > 0); extra != "" {
		fmt.Fprintf(b, "%s[key: string]: %s;\n", inner, extra)
	}
	b.WriteString(indent + "}")
}

// indexSignature is the type of keys beyond the named properties, or "" when there are none.
// Beside named properties it must admit theirs, hence unknown: reading an unknown key then
// needs a check, and writing one is refused like any other write to a view.
func (g *generator) indexSignature(s *schema, indent string, hasProps bool) string {
	var t string
	switch {
	case s.AdditionalProperties != nil && s.AdditionalProperties.schema != nil:
		t = g.tsType(s.AdditionalProperties.schema, indent)
	case s.PreserveUnknown || (s.AdditionalProperties != nil && s.AdditionalProperties.allowed):
		t = jsonValue
	case !hasProps:
		t = jsonValue // an object of unknown shape
	default:
		return ""
	}
	if hasProps {
		return "unknown"
	}
	return t
}

// compound reports whether t is a union or intersection at its top level (outside brackets), so
// that it needs parentheses inside another one or before [].
func compound(t string) bool {
	depth := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '{', '(', '[':
			depth++
		case '}', ')', ']':
			depth--
		case '|', '&':
			if depth == 0 {
				return true
			}
		}
	}
	return false
}

func arrayOf(elem string) string {
	if compound(elem) {
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
			return jsonValue // an object or array value has no literal type
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
