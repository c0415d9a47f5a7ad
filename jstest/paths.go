package jstest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// resolve is where a path named in a test file is read from: an absolute path as it is, a
// relative one from the test file's folder dir.
func resolve(dir, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}

// locate resolves path and checks that the file exists; a missing one is an error naming the
// path as written and where it was looked for.
func locate(dir, path string) (string, error) {
	full := resolve(dir, path)
	if _, err := os.Stat(full); errors.Is(err, fs.ErrNotExist) {
		if full == path {
			return "", fmt.Errorf("%s: no such file", path)
		}
		return "", fmt.Errorf("%s: no such file (looked for %s, relative to the test file)", path, full)
	}
	return full, nil
}
