package scripting

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/evanw/esbuild/pkg/api"
)

// detachedRoot stands in for the scripts folder of a script compiled on its own (Compile): it
// never exists, and every import from such a script fails before anything is read.
const detachedRoot = "/jsinformer-detached-script"

// bundle is one script bundled with the files it imports, as CommonJS.
type bundle struct {
	code    string
	srcMap  []byte   // sources are relative to the entry's folder, so goja resolves them to names
	modules []string // the files bundled besides the entry, relative to the scripts folder, sorted
	strict  bool     // the entry is an ES module, so the bundle runs in strict mode
}

// bundler runs esbuild on one entry of a scripts folder. Its record of the files loaded is
// written by esbuild's goroutines, hence the lock.
type bundler struct {
	root     string // absolute scripts folder, or detachedRoot
	detached bool
	name     string // the entry, relative to root, slash-separated
	src      []byte // the entry's content, served from memory so it is what was read and hashed

	mu     sync.Mutex
	loaded map[string]bool // relative names of the modules esbuild loaded
}

func newBundler(dir, name string, src []byte) (*bundler, error) {
	b := &bundler{root: detachedRoot, detached: dir == "", name: path.Clean(filepath.ToSlash(name)),
		src: src, loaded: map[string]bool{}}
	if !b.detached {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("bundle %s: %w", name, err)
		}
		b.root = abs
	}
	return b, nil
}

func (b *bundler) entryPath() string { return filepath.Join(b.root, filepath.FromSlash(b.name)) }

// build runs esbuild, with a source map when it is for running. The output file is never
// written: it only places the source map's sources relative to the entry's folder.
func (b *bundler) build(withMap bool) api.BuildResult {
	srcMap := api.SourceMapNone
	if withMap {
		srcMap = api.SourceMapExternal
	}
	return api.Build(api.BuildOptions{
		EntryPoints:      []string{b.entryPath()},
		AbsWorkingDir:    b.root,
		Outfile:          b.entryPath() + ".compiled",
		Bundle:           true,
		Write:            false,
		Metafile:         true,
		Platform:         api.PlatformNeutral,
		Format:           api.FormatCommonJS,
		Target:           api.ESNext,
		Supported:        gojaUnsupported,
		MainFields:       []string{"module", "main"},
		PreserveSymlinks: true, // names stay inside the folder, as the watcher sees them
		// Every statement runs as written, used or not, as it would unbundled.
		TreeShaking:    api.TreeShakingFalse,
		Define:         map[string]string{"process.env.NODE_ENV": `"production"`},
		Sourcemap:      srcMap,
		SourcesContent: api.SourcesContentExclude,
		LogLevel:       api.LogLevelSilent,
		Plugins:        []api.Plugin{{Name: "jsinformer", Setup: b.setup}},
	})
}

func (b *bundler) setup(pb api.PluginBuild) {
	pb.OnResolve(api.OnResolveOptions{Filter: ".*"}, func(args api.OnResolveArgs) (api.OnResolveResult, error) {
		return b.resolve(pb, args), nil
	})
	pb.OnLoad(api.OnLoadOptions{Filter: ".*"}, func(args api.OnLoadArgs) (api.OnLoadResult, error) {
		return b.load(args), nil
	})
}

// resolvedMark is the PluginData of the resolution resolve asks esbuild for, so that it is not
// intercepted again.
type resolvedMark struct{}

// resolve keeps resolution inside the scripts folder and turns Node built-ins into a clear
// error. Everything else is esbuild's own resolution (relative paths, node_modules, package.json
// fields), asked for explicitly so that the result can be checked.
func (b *bundler) resolve(pb api.PluginBuild, args api.OnResolveArgs) api.OnResolveResult {
	switch {
	case args.Kind == api.ResolveEntryPoint:
		return api.OnResolveResult{Path: b.entryPath(), Namespace: "file"} // may not exist: load serves it
	case args.PluginData == (resolvedMark{}):
		return api.OnResolveResult{}
	}
	builtin := isNodeBuiltin(args.Path)
	switch {
	case strings.HasPrefix(args.Path, "node:") || (builtin && b.detached):
		return resolveError("cannot import %q: %s", args.Path, builtinReason)
	case b.detached:
		return resolveError("cannot import %q: this script was compiled on its own, without its scripts folder", args.Path)
	}
	res := pb.Resolve(args.Path, api.ResolveOptions{
		Importer: args.Importer, ResolveDir: args.ResolveDir, Kind: args.Kind, With: args.With, PluginData: resolvedMark{},
	})
	switch {
	case builtin && (len(res.Errors) > 0 || !b.inside(res.Path)):
		// A package of that name in the folder's node_modules (a browser polyfill) is used.
		return resolveError("cannot import %q: %s", args.Path, builtinReason)
	case len(res.Errors) > 0:
		return api.OnResolveResult{Errors: res.Errors}
	case res.External || res.Namespace != "file":
		return api.OnResolveResult{Path: res.Path, Namespace: res.Namespace, External: res.External}
	case !b.inside(res.Path):
		return resolveError("cannot import %q: it resolves to %s, outside the scripts folder %s; "+
			"a script may only import files and node_modules packages inside it", args.Path, res.Path, b.root)
	}
	return api.OnResolveResult{Path: res.Path, Namespace: res.Namespace, SideEffects: sideEffects(res.SideEffects)}
}

func sideEffects(has bool) api.SideEffects {
	if has {
		return api.SideEffectsTrue
	}
	return api.SideEffectsFalse
}

const builtinReason = "it is a Node.js built-in module, and scripts do not run in Node.js: " +
	"the runner's JavaScript engine has no file system, network or process access; " +
	"use the k8s, log and util globals instead"

func resolveError(format string, args ...any) api.OnResolveResult {
	return api.OnResolveResult{Errors: []api.Message{{Text: fmt.Sprintf(format, args...)}}}
}

// inside reports whether an absolute path is in the scripts folder.
func (b *bundler) inside(p string) bool {
	rel, err := filepath.Rel(b.root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// load serves the entry from memory and records every other file esbuild reads, before it
// parses them, so the record is complete even when a module fails to parse.
func (b *bundler) load(args api.OnLoadArgs) api.OnLoadResult {
	if args.Namespace != "file" {
		return api.OnLoadResult{}
	}
	if args.Path == b.entryPath() {
		contents := string(b.src)
		return api.OnLoadResult{Contents: &contents, Loader: loaderFor(b.name)}
	}
	if rel, err := filepath.Rel(b.root, args.Path); err == nil && b.inside(args.Path) {
		b.mu.Lock()
		b.loaded[filepath.ToSlash(rel)] = true
		b.mu.Unlock()
	}
	return api.OnLoadResult{} // esbuild reads the file itself
}

func (b *bundler) modules() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]string, 0, len(b.loaded))
	for name := range b.loaded {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// bundleScript bundles name, whose content is src, with what it imports from dir ("" for a
// script on its own). Errors are *ScriptError wrapping ErrSyntax, positioned in the file they
// are about, which may be a module.
func bundleScript(dir, name string, src []byte) (*bundle, error) {
	b, err := newBundler(dir, name, src)
	if err != nil {
		return nil, err
	}
	res := b.build(true)
	if len(res.Errors) > 0 {
		return nil, b.esbuildError(res.Errors)
	}
	out := &bundle{modules: b.modules(), strict: b.entryIsESM(res.Metafile)}
	for _, f := range res.OutputFiles {
		if strings.HasSuffix(f.Path, ".map") {
			out.srcMap = f.Contents
		} else {
			out.code = string(f.Contents)
		}
	}
	return out, nil
}

// entryIsESM reads the entry's format from esbuild's metafile: "esm" when it uses import or
// export, "cjs" when it uses module or exports, absent when it uses neither.
func (b *bundler) entryIsESM(metafile string) bool {
	var meta struct {
		Inputs map[string]struct {
			Format string `json:"format"`
		} `json:"inputs"`
	}
	if err := json.Unmarshal([]byte(metafile), &meta); err != nil {
		return false
	}
	return meta.Inputs[b.name].Format == "esm"
}

// Imports returns the files that the script name (relative to the scripts folder dir, with
// content src) bundles besides itself, relative to dir, slash-separated and sorted: relative
// imports, their own imports, and the node_modules files of the packages they use. When the
// script cannot be bundled, the error says why and the list holds the files read before that,
// which includes a module that fails to parse. The folder watcher uses it to tell modules from
// plugins and to reload the plugins that import a module that changed.
func Imports(dir, name string, src []byte) ([]string, error) {
	b, err := newBundler(dir, name, src)
	if err != nil {
		return nil, err
	}
	res := b.build(false)
	if len(res.Errors) > 0 {
		return b.modules(), b.esbuildError(res.Errors)
	}
	return b.modules(), nil
}

// esbuildError positions esbuild's first error in the file it is about: the entry, or a module
// (named relative to the scripts folder).
func (b *bundler) esbuildError(msgs []api.Message) *ScriptError {
	e := esbuildError(b.name, msgs)
	if loc := msgs[0].Location; loc != nil && loc.File != "" && !b.detached {
		e.File = b.relative(loc.File)
	}
	return e
}

// relative names a file esbuild reports (relative to the working directory, the scripts folder)
// the way the watcher does.
func (b *bundler) relative(file string) string {
	if filepath.IsAbs(file) {
		if rel, err := filepath.Rel(b.root, file); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(file)
}
