package jstest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/jsinformer/jsinformer/plugins"
	"github.com/jsinformer/jsinformer/scripting"
)

// The admission scripts a harness loads beside its plugin, so that the in-memory cluster
// admits every write as the API server would with the folder's webhooks registered:
// harness({admission}) names them; by default they are every plugin of the test file's
// folder that defines validate or mutate.

// admissionScripts are the plugin names (relative to the test file's folder) of the
// admission scripts to load beside plugin, in name order: those listed, or (listed nil) the
// folder's own. The plugin itself is never among them; it is loaded anyway.
func (f *fileRun) admissionScripts(plugin string, listed []string) ([]string, error) {
	names := listed
	if names == nil {
		var err error
		if names, err = f.folderAdmissionScripts(); err != nil {
			return nil, err
		}
	}
	var out []string
	for _, n := range names {
		if n = filepath.ToSlash(filepath.Clean(n)); n != plugin && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// folderAdmissionScripts lists the plugins of the test file's folder, as the runner's
// folder watcher finds them, that define validate or mutate; once per test file, and once per
// content of the folder in a process (finding the plugins bundles each of them).
func (f *fileRun) folderAdmissionScripts() ([]string, error) {
	if f.admissionFound {
		return f.folderAdmission, nil
	}
	key, err := folderKey(f.dir)
	if err != nil {
		return nil, err
	}
	if names, ok := folderCache.Load(key); ok {
		f.folderAdmission, f.admissionFound = names.([]string), true
		return f.folderAdmission, nil
	}
	sources, err := scanPlugins(f.ctx, f.dir)
	if err != nil {
		return nil, err
	}
	f.folderAdmission = nil
	for _, src := range sources {
		if admits(f.dir, src) {
			f.folderAdmission = append(f.folderAdmission, src.Name)
		}
	}
	folderCache.Store(key, f.folderAdmission)
	f.admissionFound = true
	return f.folderAdmission, nil
}

// folderCache is the admission scripts of each folder content seen: folderKey -> []string.
var folderCache sync.Map

// folderKey names dir and everything in it that can change what its plugins are: every file's
// path and content, node_modules and hidden folders left out (as the plugin watcher leaves
// them out; a package changing there is not a test run's concern).
func folderKey(dir string) (string, error) {
	h := sha256.New()
	h.Write([]byte(dir))
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != dir && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules"):
			return filepath.SkipDir
		case d.IsDir():
			return nil
		}
		content, err := os.ReadFile(path)
		if err != nil {
			return nil // unreadable: the scan decides
		}
		fmt.Fprintf(h, "\x00%s\x00%d\x00", path, len(content))
		h.Write(content)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("find the folder's admission scripts: %w", err)
	}
	return string(h.Sum(nil)), nil
}

// scanPlugins lists the plugins of dir as the runner's folder watcher finds them: modules and
// test files left out. The watcher's goroutine is this function's and has ended when it
// returns.
func scanPlugins(ctx context.Context, dir string) ([]plugins.Source, error) {
	out, err := plugins.Scan(ctx, dir, plugins.Options{Imports: scripting.Imports, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, fmt.Errorf("find the folder's admission scripts: %w", err)
	}
	return out, nil
}

// admits reports whether src defines validate or mutate; a plugin that does not load is not
// an admission script (CheckPlugins reports it).
func admits(dir string, src plugins.Source) bool {
	ok, err := loadPlugin(dir, src)
	return err == nil && ok
}
