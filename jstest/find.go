package jstest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jsinformer/jsinformer/plugins"
)

// Find lists the test files of paths: a file is taken as given, a folder is walked for
// *.test.js / *.test.ts files (hidden folders and node_modules left out). The result is
// sorted and without duplicates; a path that does not exist is an error.
func Find(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("find tests: %w", err)
		}
		if !info.IsDir() {
			out = append(out, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && path != p && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules"):
				return filepath.SkipDir
			case !d.IsDir() && plugins.IsTestFile(d.Name()):
				out = append(out, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("find tests in %s: %w", p, err)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
