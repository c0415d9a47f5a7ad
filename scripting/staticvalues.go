package scripting

import (
	"slices"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/token"
)

// The evaluation half of staticcalls.go: the string values an expression can take.

// call turns a k8s call found in the source into a StaticCall.
func (a *analysis) call(c *ast.CallExpression, pos func(int) (string, int)) StaticCall {
	method := string(c.Callee.(*ast.DotExpression).Identifier.Name)
	file, line := pos(int(c.Idx0()) - 1)
	sc := StaticCall{Method: method, File: file, Line: line}
	args := c.ArgumentList
	if method == "event" {
		sc.Resources, sc.Namespaces = []string{"v1/events"}, nil
		return sc
	}
	if vals, ok := a.arg(args, 0); ok {
		sc.Resources = vals
	}
	switch i := k8sMethods[method]; {
	case i >= 0:
		sc.Namespaces, _ = a.arg(args, i)
	case method == "list":
		sc.Namespaces = a.option(args, 1, "namespace", []string{""})
	}
	if k8sMethods[method] >= 0 {
		sc.Names, _ = a.arg(args, k8sMethods[method]+1) // the name follows the namespace
	}
	if method == "patch" {
		types := a.option(args, 4, "type", []string{"merge"})
		sc.Apply = slices.Contains(types, "apply")
	}
	return sc
}

// arg is the values of argument i; a missing argument is unknown.
func (a *analysis) arg(args []ast.Expression, i int) ([]string, bool) {
	if i >= len(args) {
		return nil, false
	}
	return a.values(args[i], 0)
}

// option is the values of key in the options object at argument i: missing gives def, a
// value not known at load nil.
func (a *analysis) option(args []ast.Expression, i int, key string, def []string) []string {
	if i >= len(args) {
		return def
	}
	obj, ok := args[i].(*ast.ObjectLiteral)
	if !ok {
		return nil
	}
	for _, p := range obj.Value {
		kv, ok := p.(*ast.PropertyKeyed)
		if !ok {
			return nil // a spread or shorthand may set the key
		}
		if k, ok := kv.Key.(*ast.StringLiteral); ok && !kv.Computed && string(k.Value) == key {
			vals, _ := a.values(kv.Value, 0)
			return vals
		}
	}
	return def
}

// maxEvalDepth bounds the evaluation's recursion.
const maxEvalDepth = 32

// values are the strings e can evaluate to, sorted and unique, and whether they are known.
func (a *analysis) values(e ast.Expression, depth int) ([]string, bool) {
	if depth > maxEvalDepth {
		return nil, false
	}
	var out []string
	switch n := e.(type) {
	case *ast.StringLiteral:
		out = []string{string(n.Value)}
	case *ast.TemplateLiteral:
		return a.template(n, depth)
	case *ast.Identifier:
		return a.name(string(n.Name), depth)
	case *ast.ConditionalExpression:
		return a.union(depth, n.Consequent, n.Alternate)
	case *ast.SequenceExpression:
		return a.values(n.Sequence[len(n.Sequence)-1], depth+1)
	case *ast.BinaryExpression:
		return a.binary(n, depth)
	default:
		return nil, false
	}
	return out, true
}

func (a *analysis) binary(n *ast.BinaryExpression, depth int) ([]string, bool) {
	switch n.Operator {
	case token.PLUS:
		return a.concat(depth, n.Left, n.Right)
	case token.LOGICAL_OR, token.COALESCE:
		return a.union(depth, n.Left, n.Right)
	}
	return nil, false
}

func (a *analysis) union(depth int, exprs ...ast.Expression) ([]string, bool) {
	var out []string
	for _, e := range exprs {
		vals, ok := a.values(e, depth+1)
		if !ok {
			return nil, false
		}
		out = append(out, vals...)
	}
	return tidy(out)
}

// concat is every value of the first expression joined with every value of the others.
func (a *analysis) concat(depth int, exprs ...ast.Expression) ([]string, bool) {
	a.joining++
	defer func() { a.joining-- }()
	out := []string{""}
	for _, e := range exprs {
		vals, ok := a.values(e, depth+1)
		if !ok || len(out)*len(vals) > maxValues {
			return nil, false
		}
		var next []string
		for _, prefix := range out {
			for _, v := range vals {
				next = append(next, prefix+v)
			}
		}
		out = next
	}
	return tidy(out)
}

func (a *analysis) template(n *ast.TemplateLiteral, depth int) ([]string, bool) {
	if n.Tag != nil {
		return nil, false
	}
	var parts []ast.Expression
	for i, el := range n.Elements {
		parts = append(parts, &ast.StringLiteral{Value: el.Parsed})
		if i < len(n.Expressions) {
			parts = append(parts, n.Expressions[i])
		}
	}
	return a.concat(depth, parts...)
}

// name is the values of every binding of a name; a name with none (a global) is unknown. A
// name met again while its values are being computed adds nothing when it was reached
// through copies only (a parameter passed on under the same name): the least solution of
// x = x ∪ A is A. Through a concatenation (x = x + "s") it is unknown: that has no finite one.
func (a *analysis) name(name string, depth int) ([]string, bool) {
	bs := a.bindings[name]
	if len(bs) == 0 {
		return nil, false
	}
	if a.busy[name] {
		if a.joining > 0 {
			return nil, false
		}
		return []string{}, true
	}
	a.busy[name] = true
	defer delete(a.busy, name)
	var out []string
	for _, b := range bs {
		vals, ok := a.bindingValues(b, depth)
		if !ok {
			return nil, false
		}
		out = append(out, vals...)
	}
	return tidy(out)
}

func (a *analysis) bindingValues(b binding, depth int) ([]string, bool) {
	switch {
	case b.unknown:
		return nil, false
	case b.fn != "":
		return a.param(b.fn, b.param, depth)
	case b.elements:
		return a.elements(b.expr, depth+1)
	}
	return a.values(b.expr, depth+1)
}

// param is the values a named function's parameter takes at its direct calls; unknown when
// the function is referenced otherwise (it may be called from anywhere).
func (a *analysis) param(fn string, i, depth int) ([]string, bool) {
	if a.refs[fn] {
		return nil, false
	}
	var out []string
	for _, args := range a.calledWith[fn] {
		if i >= len(args) {
			return nil, false
		}
		vals, ok := a.values(args[i], depth+1)
		if !ok {
			return nil, false
		}
		out = append(out, vals...)
	}
	return tidy(out)
}

// elements is the values of the elements of an array expression.
func (a *analysis) elements(e ast.Expression, depth int) ([]string, bool) {
	if depth > maxEvalDepth {
		return nil, false
	}
	switch n := e.(type) {
	case *ast.ArrayLiteral:
		var out []string
		for _, el := range n.Value {
			vals, ok := a.element(el, depth)
			if !ok {
				return nil, false
			}
			out = append(out, vals...)
		}
		return tidy(out)
	case *ast.Identifier:
		return a.arrayName(string(n.Name), depth)
	}
	return nil, false
}

func (a *analysis) element(el ast.Expression, depth int) ([]string, bool) {
	if s, ok := el.(*ast.SpreadElement); ok {
		return a.elements(s.Expression, depth+1)
	}
	return a.values(el, depth+1)
}

// arrayName is the element values of a name bound only to arrays of known values.
func (a *analysis) arrayName(name string, depth int) ([]string, bool) {
	bs := a.bindings[name]
	if len(bs) == 0 || a.busy[name] || a.refsMutate(name) {
		return nil, false
	}
	a.busy[name] = true
	defer delete(a.busy, name)
	var out []string
	for _, b := range bs {
		if b.unknown || b.fn != "" || b.elements {
			return nil, false
		}
		vals, ok := a.elements(b.expr, depth+1)
		if !ok {
			return nil, false
		}
		out = append(out, vals...)
	}
	return tidy(out)
}

// refsMutate reports an array name that may change after its initialization: an element
// assigned (arr[i] = x) or a mutating method called (arr.push(x)); see visitCall.
func (a *analysis) refsMutate(name string) bool { return a.mutated[name] }

// tidy sorts and deduplicates values, and gives up past maxValues.
func tidy(vals []string) ([]string, bool) {
	slices.Sort(vals)
	vals = slices.Compact(vals)
	if len(vals) > maxValues {
		return nil, false
	}
	if vals == nil {
		vals = []string{}
	}
	return vals, true
}
