package scripting

import (
	"encoding/base64"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/parser"
	"github.com/evanw/esbuild/pkg/api"
	"github.com/go-sourcemap/sourcemap"
)

// Program is a compiled script. It is immutable: any number of goroutines may instantiate it
// at the same time.
type Program struct {
	name    string
	src     []byte // original source, to point validation messages at a line
	prg     *goja.Program
	modules []string
	calls   []StaticCall // the k8s calls in the source (staticcalls.go)
	// readsCache: the source may read ctx.cache (staticcache.go)
	readsCache bool
}

// Name is the file name the program was compiled under, relative to the scripts folder.
func (p *Program) Name() string { return p.name }

// Modules are the files bundled into the program besides its own, relative to the scripts
// folder, sorted.
func (p *Program) Modules() []string { return slices.Clone(p.modules) }

// gojaUnsupported lists what esbuild must lower because goja cannot run it; everything else
// goja supports is passed through untouched so stacks stay close to the source.
var gojaUnsupported = map[string]bool{
	"async-generator": false,
	"for-await":       false,
	"using":           false,
	"top-level-await": false,
}

// The wrapper turns the CommonJS output into a function of (exports, require, module). It
// sits on a line of its own so that the source map only needs shifting by one line.
const wrapperHead = "(function (exports, require, module) {"

// Compile compiles a script on its own, outside any scripts folder: it may not import
// anything. See CompileIn.
func Compile(name string, src []byte) (*Program, error) {
	return CompileIn("", name, src)
}

// CompileIn bundles the script name (a path relative to the scripts folder dir, whose content
// is src: ESM or CommonJS JavaScript, or TypeScript when name ends in .ts) with the files and
// node_modules packages it imports from dir, into a CommonJS function, and compiles it once.
// Errors are *ScriptError wrapping ErrSyntax, positioned in the original file they are about,
// the script or one of its modules.
func CompileIn(dir, name string, src []byte) (*Program, error) {
	b, err := bundleScript(dir, name, src)
	if err != nil {
		return nil, err
	}
	wrapped, srcMap, err := wrap(b.code, b.srcMap, b.strict)
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", name, err)
	}
	prg, calls, cache, err := compileWrapped(name, wrapped, srcMap)
	if err != nil {
		return nil, err
	}
	return &Program{name: name, src: src, prg: prg, modules: b.modules, calls: calls, readsCache: cache}, nil
}

func loaderFor(name string) api.Loader {
	switch strings.ToLower(path.Ext(name)) {
	case ".ts", ".mts", ".cts":
		return api.LoaderTS
	default:
		return api.LoaderJS
	}
}

func esbuildError(name string, msgs []api.Message) *ScriptError {
	m := msgs[0]
	e := &ScriptError{File: name, Message: m.Text, Err: ErrSyntax}
	if m.Location != nil {
		e.Line, e.Column = m.Location.Line, m.Location.Column+1 // esbuild columns are 0-based
	}
	if len(msgs) > 1 {
		e.Message += fmt.Sprintf(" (and %d more errors)", len(msgs)-1)
	}
	return e
}

// wrap puts code inside the CommonJS function and appends the shifted source map inline.
// An ESM entry runs in strict mode as it would natively, and so do the modules bundled with
// it; a CommonJS entry keeps sloppy mode, as in Node.
func wrap(code string, srcMap []byte, strict bool) (string, []byte, error) {
	shifted, err := shiftMap(srcMap)
	if err != nil {
		return "", nil, err
	}
	if strings.HasPrefix(code, "#!") { // a hashbang is only legal at the very start of a file
		code = "//" + code
	}
	var b strings.Builder
	b.WriteString(wrapperHead)
	if strict {
		b.WriteString(`"use strict";`)
	}
	b.WriteString("\n")
	b.WriteString(code)
	b.WriteString("\n})\n//# sourceMappingURL=data:application/json;base64,")
	b.WriteString(base64.StdEncoding.EncodeToString(shifted))
	return b.String(), shifted, nil
}

// compileWrapped parses and compiles the wrapped bundle, and finds its k8s calls and whether
// it reads ctx.cache in the same syntax tree.
func compileWrapped(name, wrapped string, srcMap []byte) (*goja.Program, []StaticCall, bool, error) {
	ast, err := parser.ParseFile(nil, generatedName(name), wrapped, 0)
	if err != nil {
		return nil, nil, false, parseError(name, err, srcMap)
	}
	prg, err := goja.CompileAST(ast, false)
	if err != nil {
		return nil, nil, false, compileError(name, err)
	}
	calls := findCalls(ast, func(offset int) (string, int) {
		src, line, _, ok := sourcePosition(name, ast.File.Position(offset))
		if !ok {
			return name, 0
		}
		return src, line
	})
	return prg, calls, readsCache(ast), nil
}

// parseError maps goja's parser positions, which are reported before the source map is
// attached, back to the original source.
func parseError(name string, err error, srcMap []byte) *ScriptError {
	var list parser.ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		return &ScriptError{File: name, Message: err.Error(), Err: ErrSyntax}
	}
	first := list[0]
	e := &ScriptError{File: name, Message: first.Message, Err: ErrSyntax}
	if sm, err := sourcemap.Parse("", srcMap); err == nil {
		// Same lookup as goja's, which the shifted map is made for; see shiftMap.
		if source, _, line, col, ok := sm.Source(first.Position.Line, first.Position.Column); ok {
			e.File = file.ResolveSourcemapURL(generatedName(name), source).Path
			e.Line, e.Column = line, col
		}
	}
	return e
}

func compileError(name string, err error) *ScriptError {
	var cse *goja.CompilerSyntaxError
	if !errors.As(err, &cse) || cse.File == nil {
		return &ScriptError{File: name, Message: err.Error(), Err: ErrSyntax}
	}
	e := &ScriptError{File: name, Message: cse.Message, Err: ErrSyntax}
	if src, line, col, ok := sourcePosition(name, cse.File.Position(cse.Offset)); ok {
		e.File, e.Line, e.Column = src, line, col
	}
	return e
}

// generatedName is the file name goja knows the generated code by. It differs from name so
// that positions goja could map back to the original (reported under name, resolved from the
// source map) can be told from positions in generated code (esbuild helpers, the wrapper).
func generatedName(name string) string { return name + ".compiled" }

// sourcePosition returns the original file (the script name, or a module bundled with it,
// relative to the scripts folder) and position of a goja position in the program compiled
// under name, or false when it lies in generated code (esbuild's helpers, the wrapper) or
// outside the program.
func sourcePosition(name string, p file.Position) (src string, line, col int, ok bool) {
	if p.Line == 0 || p.Filename == generatedName(name) || p.Filename == "" {
		return "", 0, 0, false
	}
	src = unescape(p.Filename)
	if src == internalName || strings.HasPrefix(src, "<") {
		return "", 0, 0, false
	}
	return src, p.Line, p.Column, true
}
