package jstest

import (
	"context"
	"crypto/sha256"
	"path/filepath"
	"slices"
	"sync"

	"github.com/jsinformer/jsinformer/plugins"
	"github.com/jsinformer/jsinformer/scripting"
)

// CheckPlugins loads every plugin of the test files' folders, as the runner would load the
// folder with --scripts, and returns one FileResult (Plugin set) for each that does not load:
// its Error is the runner's message, with the file and line. A folder that tests pass is
// still broken when one of its plugins does not load: `runner test` fails the run for it.
// A plugin found under several of the folders is reported once.
func CheckPlugins(ctx context.Context, testFiles []string) []FileResult {
	var dirs []string
	for _, f := range testFiles {
		if d := filepath.Dir(f); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	var out []FileResult
	seen := map[string]bool{}
	for _, dir := range dirs {
		sources, err := scanPlugins(ctx, dir)
		if err != nil {
			out = append(out, FileResult{File: filepath.ToSlash(dir), Plugin: true, Error: err.Error(), Tests: []TestResult{}})
			continue
		}
		for _, src := range sources {
			if seen[src.Path] {
				continue
			}
			seen[src.Path] = true
			if _, err := loadPlugin(dir, src); err != nil {
				name := filepath.ToSlash(filepath.Join(dir, filepath.FromSlash(src.Name)))
				out = append(out, FileResult{File: name, Plugin: true, Error: "does not load: " + err.Error(), Tests: []TestResult{}})
			}
		}
	}
	return out
}

// loaded is what loading a plugin found: whether it defines validate or mutate, or why it
// does not load.
type loaded struct {
	admits bool
	err    error
}

// loadedCache remembers, by folder, name and content, what loading a plugin found: loading
// compiles and evaluates it, which every test file of a folder would otherwise repeat.
var loadedCache sync.Map // [sha256.Size]byte -> loaded

// loadPlugin compiles and instantiates src as the runner loads a plugin of dir, and reports
// whether it defines validate or mutate.
func loadPlugin(dir string, src plugins.Source) (bool, error) {
	key := sha256.Sum256([]byte(dir + "\x00" + src.Name + "\x00" + string(src.Content)))
	if v, ok := loadedCache.Load(key); ok {
		return v.(loaded).admits, v.(loaded).err
	}
	var l loaded
	l.admits, l.err = scripting.DefinesAdmission(dir, src.Name, src.Content)
	loadedCache.Store(key, l)
	return l.admits, l.err
}
