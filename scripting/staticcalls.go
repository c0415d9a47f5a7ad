package scripting

import (
	"slices"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/token"
)

// Static discovery of the k8s calls a program makes, for the permissions it needs
// (package permissions). It reads the bundled program's AST once, at compile time, and finds
// every `k8s.<method>(...)` call. The resource argument is evaluated as far as the source
// allows without running it: string and template literals, and names whose every binding in
// the bundle is such a value (a const, a for-of over an array literal, a parameter of a
// function only ever called directly with such values), joined and chosen between with `+`,
// `?:`, `||` and `??`. The evaluation ignores scopes: a name's values are the union over all
// its bindings, which can only add values, never lose one. A call whose resource cannot be
// evaluated is kept with Resources nil: what it touches is known at run time only. A use of
// the k8s global other than a method call (an alias, an argument) is kept as a call with
// Method "" so that nothing the script can reach goes unreported.

// StaticCall is one k8s call found in a program's source.
type StaticCall struct {
	// Method is the k8s method called ("get", "patch", "addFinalizer", ...), "" for a use of
	// the k8s global that is not a method call.
	Method string
	// Resources are the values the resource argument can take, sorted; nil when they are known
	// at run time only.
	Resources []string
	// Namespaces are the values of the namespace argument (the list options' namespace for
	// list), sorted; nil when not known at load, which includes create and update (the
	// namespace is the object's). "" means every namespace (or a cluster-scoped resource).
	Namespaces []string
	// Names are the values of the name argument of the methods that take one (get, patch,
	// patchStatus, delete and the finalizer helpers), sorted; nil when not known at load.
	Names []string
	// Apply is set for a patch whose options say {type: "apply"}: a server-side apply, which
	// creates the object when it does not exist.
	Apply bool
	// File and Line locate the call in the original source (a module of the plugin, relative
	// to the scripts folder); Line is 0 when the call lies in generated code.
	File string
	Line int
}

// k8sMethods are the methods of the k8s global; namespaceArg is the index of each one's
// namespace argument, -1 when it has none (create, update, updateStatus and event take an
// object; list takes it in its options).
var k8sMethods = map[string]int{
	"get": 1, "list": -1, "create": -1, "update": -1, "updateStatus": -1, "patch": 1, "patchStatus": 1,
	"delete": 1, "event": -1, "addFinalizer": 1, "removeFinalizer": 1,
}

// maxValues bounds the values one expression may have; beyond, it counts as unknown.
const maxValues = 64

// Calls are the k8s calls found in the program's source, in source order.
func (p *Program) Calls() []StaticCall { return slices.Clone(p.calls) }

// binding is one way a name gets a value.
type binding struct {
	expr     ast.Expression // the value; or the array iterated by a for-of
	elements bool           // for-of: the name takes each element of expr
	fn       string         // a parameter of the named function ...
	param    int            // ... at this index
	unknown  bool
}

type analysis struct {
	bindings   map[string][]binding
	functions  map[ast.Node]string           // function literals bound to a name
	calledWith map[string][][]ast.Expression // direct calls of each name
	skip       map[*ast.Identifier]bool      // identifiers that are not references
	refs       map[string]bool               // names referenced other than as a direct callee
	mutated    map[string]bool               // arrays changed in place (see refsMutate)
	k8sUses    []*ast.Identifier             // k8s referenced other than as a method call's receiver
	calls      []*ast.CallExpression
	busy       map[string]bool // names being evaluated, against cycles
	joining    int             // concatenations being evaluated (see name)
}

// findCalls analyses a parsed program; pos maps an offset to file and line.
func findCalls(prg *ast.Program, pos func(file int) (string, int)) []StaticCall {
	a := &analysis{bindings: map[string][]binding{}, functions: map[ast.Node]string{},
		calledWith: map[string][][]ast.Expression{}, skip: map[*ast.Identifier]bool{},
		refs: map[string]bool{}, mutated: map[string]bool{}, busy: map[string]bool{}}
	walkAST(prg, a.visit)
	var out []StaticCall
	for _, c := range a.calls {
		out = append(out, a.call(c, pos))
	}
	for _, id := range a.k8sUses {
		if !a.skip[id] {
			file, line := pos(int(id.Idx) - 1)
			out = append(out, StaticCall{File: file, Line: line})
		}
	}
	return out
}

func (a *analysis) visit(node any) {
	switch n := node.(type) {
	case *ast.CallExpression:
		a.visitCall(n)
	case *ast.FunctionDeclaration:
		if n.Function.Name != nil {
			a.functions[n.Function] = string(n.Function.Name.Name)
		}
	case *ast.FunctionLiteral:
		a.visitFunction(n, n.Name, n.ParameterList)
	case *ast.ArrowFunctionLiteral:
		a.visitFunction(n, nil, n.ParameterList)
	case *ast.VariableStatement:
		a.declare(n.List)
	case *ast.LexicalDeclaration:
		a.declare(n.List)
	case *ast.ForLoopInitializerVarDeclList:
		a.declare(n.List)
	case *ast.ForOfStatement:
		a.visitForOf(n)
	case *ast.ForInStatement:
		a.forTarget(n.Into, binding{unknown: true})
	case *ast.CatchStatement:
		a.bindTarget(n.Parameter, binding{unknown: true})
	case *ast.AssignExpression:
		a.visitAssign(n)
	case *ast.UnaryExpression:
		if id, ok := n.Operand.(*ast.Identifier); ok && (n.Operator == token.INCREMENT || n.Operator == token.DECREMENT) {
			a.bind(id, binding{unknown: true})
		}
	case *ast.PropertyShort:
		a.refs[string(n.Name.Name)] = true
	case *ast.Identifier:
		a.visitIdentifier(n)
	}
}

func (a *analysis) visitIdentifier(id *ast.Identifier) {
	if a.skip[id] {
		return
	}
	a.refs[string(id.Name)] = true
	if id.Name == "k8s" {
		a.k8sUses = append(a.k8sUses, id)
	}
}

func (a *analysis) visitCall(c *ast.CallExpression) {
	switch callee := c.Callee.(type) {
	case *ast.Identifier:
		a.skip[callee] = true
		a.calledWith[string(callee.Name)] = append(a.calledWith[string(callee.Name)], c.ArgumentList)
	case *ast.DotExpression:
		recv, ok := callee.Left.(*ast.Identifier)
		if !ok {
			return
		}
		method := string(callee.Identifier.Name)
		if _, known := k8sMethods[method]; known && recv.Name == "k8s" {
			a.skip[recv] = true
			a.calls = append(a.calls, c)
		}
		if mutators[method] {
			a.mutated[string(recv.Name)] = true
		}
	}
}

// mutators are the Array methods that change an array in place.
var mutators = map[string]bool{"push": true, "unshift": true, "splice": true, "fill": true, "copyWithin": true}

// visitFunction binds a function's parameters: to its call sites when it has a name, else
// to what the caller passes, unknown here.
func (a *analysis) visitFunction(fn ast.Node, name *ast.Identifier, params *ast.ParameterList) {
	if name != nil {
		a.skip[name] = true
		if _, ok := a.functions[fn]; !ok {
			a.functions[fn] = string(name.Name) // a named function expression
		}
	}
	fnName, named := a.functions[fn]
	for i, p := range params.List {
		b := binding{unknown: true}
		if named {
			b = binding{fn: fnName, param: i}
		}
		a.bindTarget(p.Target, b)
		if id, ok := p.Target.(*ast.Identifier); ok && p.Initializer != nil {
			a.bind(id, binding{expr: p.Initializer})
		}
	}
	if params.Rest != nil {
		a.bindTarget(params.Rest, binding{unknown: true})
	}
}

func (a *analysis) declare(list []*ast.Binding) {
	for _, b := range list {
		id, ok := b.Target.(*ast.Identifier)
		if !ok {
			a.bindTarget(b.Target, binding{unknown: true})
			continue
		}
		switch init := b.Initializer.(type) {
		case nil:
			a.skip[id] = true // assignments bind it later
		case *ast.FunctionLiteral, *ast.ArrowFunctionLiteral:
			a.functions[init] = string(id.Name)
			a.bind(id, binding{unknown: true})
		default:
			a.bind(id, binding{expr: init})
		}
	}
}

func (a *analysis) visitForOf(n *ast.ForOfStatement) {
	a.forTarget(n.Into, binding{expr: n.Source, elements: true})
}

func (a *analysis) forTarget(into ast.ForInto, b binding) {
	switch t := into.(type) {
	case *ast.ForIntoVar:
		a.bindTarget(t.Binding.Target, b)
	case *ast.ForDeclaration:
		a.bindTarget(t.Target, b)
	case *ast.ForIntoExpression:
		if id, ok := t.Expression.(*ast.Identifier); ok {
			a.bind(id, b)
		}
	}
}

func (a *analysis) visitAssign(n *ast.AssignExpression) {
	if br, ok := n.Left.(*ast.BracketExpression); ok {
		if arr, ok := br.Left.(*ast.Identifier); ok {
			a.mutated[string(arr.Name)] = true
		}
	}
	id, ok := n.Left.(*ast.Identifier)
	if !ok {
		return
	}
	if n.Operator == token.ASSIGN {
		a.bind(id, binding{expr: n.Right})
	} else {
		a.bind(id, binding{unknown: true})
	}
}

// bindTarget binds an identifier, or every identifier of a destructuring pattern as unknown.
func (a *analysis) bindTarget(t ast.Node, b binding) {
	if id, ok := t.(*ast.Identifier); ok {
		a.bind(id, b)
		return
	}
	walkAST(t, func(node any) {
		if id, ok := node.(*ast.Identifier); ok {
			a.bindings[string(id.Name)] = append(a.bindings[string(id.Name)], binding{unknown: true})
		}
	})
}

func (a *analysis) bind(id *ast.Identifier, b binding) {
	a.skip[id] = true
	a.bindings[string(id.Name)] = append(a.bindings[string(id.Name)], b)
}
