package plugins

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// ImportsFunc returns the files that the script name (slash-separated, relative to the scripts
// folder dir), whose content is content, bundles besides itself: relative names,
// slash-separated, that may include files that are not scripts (node_modules packages, JSON).
// When the script cannot be bundled it returns the error and the files it could read, a module
// that fails to parse included. The engine passes scripting.Imports.
type ImportsFunc func(dir, name string, content []byte) ([]string, error)

// keyModules is the log key of a plugin's modules.
const keyModules = "modules"

// graph tells modules from plugins and versions each plugin with the modules it bundles.
// It belongs to Run's goroutine.
type graph struct {
	root    string
	imports ImportsFunc // nil: only lib/ folders hold modules
	log     *slog.Logger
	watch   func(dir string)

	// cache remembers each candidate's imports while neither it nor any of them changes.
	cache map[string]importsEntry
	// lastHashes are the module hashes last used in a plugin's version, and waiting the
	// modules held back as possibly half-written; see moduleHashes.
	lastHashes map[string]string
	waiting    map[string]bool
}

type importsEntry struct {
	hash    string            // the candidate's own content hash
	modules map[string]string // module name -> content hash when the imports were computed
}

func newGraph(root string, imports ImportsFunc, log *slog.Logger, watch func(string)) *graph {
	return &graph{root: root, imports: imports, log: log, watch: watch,
		cache: map[string]importsEntry{}, lastHashes: map[string]string{}, waiting: map[string]bool{}}
}

// plugins turns a scan of every script file into the plugins among them. Files under a folder
// named lib, and files that another candidate imports, are modules. A plugin's Modules are the
// files it bundles and its Hash covers them, so that saving a module changes the version of
// exactly the plugins that import it, directly or not. retry is true when a module was held
// back as possibly half-written, as state.apply does for plugins.
func (g *graph) plugins(files map[string]Source) (out map[string]Source, retry bool) {
	g.watchNodeModules()
	modulesOf := map[string][]string{}
	isModule := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if inLib(name) {
			isModule[name] = true
			continue
		}
		modulesOf[name] = g.importsOf(files[name], files)
		for _, m := range modulesOf[name] {
			isModule[m] = true
		}
	}
	for name := range g.cache {
		if _, ok := modulesOf[name]; !ok {
			delete(g.cache, name)
		}
	}
	hashes, retry := g.moduleHashes(modulesOf, isModule, files)
	out = map[string]Source{}
	for name, modules := range modulesOf {
		if isModule[name] {
			continue
		}
		src := files[name]
		src.Modules = modules
		src.Hash = version(src.Hash, modules, hashes)
		out[name] = src
	}
	return out, retry
}

// inLib reports whether a script lives in a folder named lib, at any depth.
func inLib(name string) bool {
	dir := path.Dir(name)
	return dir == "lib" || strings.HasPrefix(dir, "lib/") || strings.HasSuffix(dir, "/lib") ||
		strings.Contains(dir, "/lib/")
}

// importsOf returns src's modules, from the cache when neither src nor any of its modules has
// changed since they were computed. A script that failed to bundle is asked again on every
// scan: the file it missed may have appeared.
func (g *graph) importsOf(src Source, files map[string]Source) []string {
	if g.imports == nil {
		return nil
	}
	if e, ok := g.cache[src.Name]; ok && e.hash == src.Hash && g.unchanged(e.modules, files) {
		return slices.Sorted(maps.Keys(e.modules))
	}
	modules, err := g.imports(g.root, src.Name, src.Content)
	modules = slices.DeleteFunc(slices.Clone(modules), func(m string) bool { return m == src.Name })
	slices.Sort(modules)
	if err != nil {
		delete(g.cache, src.Name)
		g.log.Debug("script does not bundle; its load will report why", keyScript, src.Name, keyError, err)
		return modules
	}
	e := importsEntry{hash: src.Hash, modules: map[string]string{}}
	for _, m := range modules {
		e.modules[m] = g.contentHash(m, files)
	}
	g.cache[src.Name] = e
	return modules
}

func (g *graph) unchanged(modules map[string]string, files map[string]Source) bool {
	for m, hash := range modules {
		if g.contentHash(m, files) != hash {
			return false
		}
	}
	return true
}

// contentHash is a module's content hash: from the scan for scripts, else read now (packages
// in node_modules, JSON). An unreadable module hashes as "": its importer's load reports it.
func (g *graph) contentHash(name string, files map[string]Source) string {
	if src, ok := files[name]; ok {
		return src.Hash
	}
	content, err := os.ReadFile(filepath.Join(g.root, filepath.FromSlash(name)))
	if err != nil {
		return ""
	}
	return hashContent(content)
}

// version is a plugin's Hash: its own content's when it imports nothing, else a hash of that
// and of every module's name and hash.
func version(own string, modules []string, hashes map[string]string) string {
	if len(modules) == 0 {
		return own
	}
	h := sha256.New()
	h.Write([]byte(own))
	for _, m := range modules {
		h.Write([]byte("\n" + m + " " + hashes[m]))
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// moduleHashes returns the hash of every module a plugin imports, to version the plugins with,
// and forgets the modules no plugin imports any more. A module that became empty after having
// content is most likely a save in progress (a truncate whose write has not landed yet): its
// previous hash stands for one more quiet period, as for plugins, and held is true.
func (g *graph) moduleHashes(modulesOf map[string][]string, isModule map[string]bool, files map[string]Source) (hashes map[string]string, held bool) {
	hashes = map[string]string{}
	for name, modules := range modulesOf {
		if isModule[name] {
			continue
		}
		for _, m := range modules {
			if _, done := hashes[m]; done {
				continue
			}
			hash := g.contentHash(m, files)
			prev, known := g.lastHashes[m]
			if known && hash == emptyHash && prev != emptyHash && !g.waiting[m] {
				g.waiting[m] = true
				hashes[m], held = prev, true
				continue
			}
			delete(g.waiting, m)
			g.lastHashes[m], hashes[m] = hash, hash
		}
	}
	for m := range g.lastHashes {
		if _, ok := hashes[m]; !ok {
			delete(g.lastHashes, m)
			delete(g.waiting, m)
		}
	}
	return hashes, held
}

// watchNodeModules watches the folder's node_modules (which the scan does not walk), so that
// installing or updating a package rescans the folder and reloads the plugins it changes.
func (g *graph) watchNodeModules() {
	if g.imports == nil {
		return
	}
	dir := filepath.Join(g.root, "node_modules")
	info, err := os.Stat(dir)
	switch {
	case err == nil && info.IsDir():
		g.watch(dir)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		g.log.Warn("cannot read node_modules; installing packages may not reload scripts", keyDir, dir, keyError, err)
	}
}
