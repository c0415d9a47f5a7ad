package scripting

import (
	"encoding/base64"
	"errors"
	"fmt"
	"path"
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
	name string
	src  []byte // original source, to point validation messages at a line
	prg  *goja.Program
}

// Name is the file name the program was compiled under, relative to the scripts folder.
func (p *Program) Name() string { return p.name }

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

// Compile transforms name's source (ESM or CommonJS JavaScript, or TypeScript when name ends
// in .ts) into a CommonJS function and compiles it once. Errors are *ScriptError wrapping
// ErrSyntax, positioned in the original source.
func Compile(name string, src []byte) (*Program, error) {
	code, srcMap, err := transform(name, src)
	if err != nil {
		return nil, err
	}
	wrapped, srcMap, err := wrap(code, srcMap)
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", name, err)
	}
	prg, err := compileWrapped(name, wrapped, srcMap)
	if err != nil {
		return nil, err
	}
	return &Program{name: name, src: src, prg: prg}, nil
}

func transform(name string, src []byte) (string, []byte, error) {
	res := api.Transform(string(src), api.TransformOptions{
		Loader:         loaderFor(name),
		Format:         api.FormatCommonJS,
		Target:         api.ESNext,
		Supported:      gojaUnsupported,
		Sourcemap:      api.SourceMapExternal,
		SourcesContent: api.SourcesContentExclude,
		// goja resolves the map's source against the file name, so a base name comes back as name.
		Sourcefile: path.Base(name),
		LogLevel:   api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		return "", nil, esbuildError(name, res.Errors)
	}
	return string(res.Code), res.Map, nil
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
// ESM input (recognised by esbuild's interop helper) runs in strict mode as it would natively;
// plain CommonJS keeps sloppy mode, as in Node.
func wrap(code string, srcMap []byte) (string, []byte, error) {
	shifted, err := shiftMap(srcMap)
	if err != nil {
		return "", nil, err
	}
	if strings.HasPrefix(code, "#!") { // a hashbang is only legal at the very start of a file
		code = "//" + code
	}
	var b strings.Builder
	b.WriteString(wrapperHead)
	if strings.Contains(code, "__toCommonJS(") {
		b.WriteString(`"use strict";`)
	}
	b.WriteString("\n")
	b.WriteString(code)
	b.WriteString("\n})\n//# sourceMappingURL=data:application/json;base64,")
	b.WriteString(base64.StdEncoding.EncodeToString(shifted))
	return b.String(), shifted, nil
}

func compileWrapped(name, wrapped string, srcMap []byte) (*goja.Program, error) {
	ast, err := parser.ParseFile(nil, generatedName(name), wrapped, 0)
	if err != nil {
		return nil, parseError(name, err, srcMap)
	}
	prg, err := goja.CompileAST(ast, false)
	if err != nil {
		return nil, compileError(name, err)
	}
	return prg, nil
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
		if _, _, line, col, ok := sm.Source(first.Position.Line, first.Position.Column); ok {
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
	e.Line, e.Column, _ = sourcePosition(name, cse.File.Position(cse.Offset))
	return e
}

// generatedName is the file name goja knows the generated code by. It differs from name so
// that positions goja could map back to the original (reported under name, resolved from the
// source map) can be told from positions in generated code (esbuild helpers, the wrapper).
func generatedName(name string) string { return name + ".compiled" }

// sourcePosition returns the original position of a goja position, or false when it lies in
// generated code.
func sourcePosition(name string, p file.Position) (line, col int, ok bool) {
	if p.Line == 0 || unescape(p.Filename) != name {
		return 0, 0, false
	}
	return p.Line, p.Column, true
}
