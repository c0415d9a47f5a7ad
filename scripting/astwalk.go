package scripting

import (
	"reflect"

	"github.com/dop251/goja/ast"
)

// astPkg is the package path of goja's AST types: the walker descends only into those.
var astPkg = reflect.TypeFor[ast.Program]().PkgPath()

// identType is skipped when held by value: DotExpression.Identifier and PropertyShort.Name
// (property names, which staticcalls.go reads itself) and PrivateIdentifier's.
var identType = reflect.TypeFor[ast.Identifier]()

// walkAST calls visit with every node of the tree under root, parents before children, by
// reflection over goja's AST types (goja has no walker). DeclarationList fields are skipped:
// they repeat declarations found in the body.
func walkAST(root any, visit func(node any)) {
	walkValue(reflect.ValueOf(root), visit)
}

func walkValue(v reflect.Value, visit func(any)) {
	switch v.Kind() {
	case reflect.Interface:
		if !v.IsNil() {
			walkValue(v.Elem(), visit)
		}
	case reflect.Pointer:
		if v.IsNil() || v.Type().Elem().PkgPath() != astPkg || v.Type().Elem().Kind() != reflect.Struct {
			return
		}
		visit(v.Interface())
		walkFields(v.Elem(), visit)
	case reflect.Slice:
		for i := range v.Len() {
			walkValue(v.Index(i), visit)
		}
	}
}

func walkFields(v reflect.Value, visit func(any)) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Name == "DeclarationList" {
			continue
		}
		fv := v.Field(i)
		switch {
		case f.Type == identType:
		case f.Type.Kind() == reflect.Struct && f.Type.PkgPath() == astPkg:
			walkValue(fv.Addr(), visit) // e.g. ForLoopInitializerLexicalDecl's declaration
		default:
			walkValue(fv, visit)
		}
	}
}
