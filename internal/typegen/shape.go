package typegen

import "slices"

// A schema's shape is what it says a value looks like (type, properties, items, ...), as
// opposed to what only validates it. CustomResourceDefinitions use allOf, anyOf and oneOf
// mostly to validate: Istio's StringMatch is an object with properties exact, prefix and
// regex, plus `oneOf: [{not: {anyOf: [{required: [exact]}, ...]}}, {required: [exact]}, ...]`.
// Such branches add nothing to the type and must not erase the object's own properties; the
// structural-schema rules even forbid a branch to declare a field the object does not. Only
// branches that add a shape (a property the object lacks, a reference, another type) change
// the type: oneOf and anyOf then give a union of the object merged with each branch, allOf an
// intersection.

// hasOwnShape reports whether s says, outside its combinators, what its values look like.
func hasOwnShape(s *schema) bool {
	return s.Type != "" || len(s.Properties) > 0 || s.AdditionalProperties != nil || s.Items != nil ||
		len(s.Enum) > 0 || s.PreserveUnknown
}

// addsShape reports whether branch b of a combinator on base adds to base's shape rather than
// only validating it.
func addsShape(base, b *schema) bool {
	if b.Ref != "" || (b.Type != "" && b.Type != base.Type) || (b.Items != nil && base.Items == nil) || b.IntOrString {
		return true
	}
	for p := range b.Properties {
		if _, ok := base.Properties[p]; !ok {
			return true
		}
	}
	for _, list := range [][]*schema{b.AllOf, b.AnyOf, b.OneOf} {
		for _, sub := range list {
			if addsShape(base, sub) {
				return true
			}
		}
	}
	return false
}

// shapeBranches are the branches of list that add to base's shape.
func shapeBranches(base *schema, list []*schema) []*schema {
	var out []*schema
	for _, b := range list {
		if b != nil && addsShape(base, b) {
			out = append(out, b)
		}
	}
	return out
}

// bare is s without its combinators: the shape its own keywords give.
func bare(s *schema) *schema {
	c := *s
	c.AllOf, c.AnyOf, c.OneOf = nil, nil, nil
	return &c
}

// merge is the object base with branch b's properties added and b's required fields
// required: one member of the union a oneOf or anyOf stands for. Nested combinators of b are
// not followed (a branch that needs them is typed as an intersection by variant).
func merge(base, b *schema) *schema {
	m := bare(base)
	m.Properties = make(map[string]*schema, len(base.Properties)+len(b.Properties))
	for p, ps := range base.Properties {
		m.Properties[p] = ps
	}
	for p, ps := range b.Properties {
		if _, ok := m.Properties[p]; !ok {
			m.Properties[p] = ps
		}
	}
	m.Required = slices.Clone(base.Required)
	for _, r := range b.Required {
		if !slices.Contains(m.Required, r) {
			m.Required = append(m.Required, r)
		}
	}
	if m.Type == "" && len(m.Properties) > 0 {
		m.Type = "object"
	}
	return m
}

// mergeable reports whether b can be merged into base as properties: it adds properties and
// nothing else (no reference, no other type, no nested combinator of its own).
func mergeable(base, b *schema) bool {
	return b.Ref == "" && (b.Type == "" || b.Type == base.Type) && b.Items == nil && !b.IntOrString &&
		len(b.AllOf)+len(b.AnyOf)+len(b.OneOf) == 0 && (base.Type == "object" || base.Type == "" && len(base.Properties) > 0)
}
