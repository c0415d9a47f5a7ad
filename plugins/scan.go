package plugins

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
)

// scanner walks the scripts folder and reads every script in it. It follows
// symlinks (ConfigMap volumes are all symlinks) and registers a watch for each
// folder it enters before listing it, so nothing created after the listing
// can go unnoticed.
type scanner struct {
	root  string
	exts  []string
	log   *slog.Logger
	watch func(dir string) // best effort; failures are the callee's to log
}

// walk is the state of one scan.
type walk struct {
	snap map[string]Source
	seen map[string]bool // real paths of folders entered, against symlink loops
}

// scan returns every readable script by Name. Problems below the root are
// logged and the affected entries left out; only an unreadable root fails.
func (s *scanner) scan() (map[string]Source, error) {
	w := &walk{snap: map[string]Source{}, seen: map[string]bool{}}
	if err := s.walkDir(w, s.root, ""); err != nil {
		return nil, err
	}
	return w.snap, nil
}

func (s *scanner) walkDir(w *walk, dir, rel string) error {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		if w.seen[real] {
			return nil
		}
		w.seen[real] = true
	}
	s.watch(dir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("read folder: %w", err)
	}
	for _, e := range entries {
		s.visit(w, dir, rel, e)
	}
	return nil
}

func (s *scanner) visit(w *walk, dir, rel string, e fs.DirEntry) {
	name := e.Name()
	if isHidden(name) {
		return
	}
	full, relName := filepath.Join(dir, name), path.Join(rel, name)
	mode, err := followMode(full, e)
	if err != nil {
		s.logSkip(relName, err)
		return
	}
	switch {
	case mode.IsDir() && !skipDir(name):
		if err := s.walkDir(w, full, relName); err != nil {
			s.logSkip(relName, err)
		}
	case mode.IsRegular() && isScript(name, s.exts):
		s.read(w, full, relName, e.Type()&fs.ModeSymlink != 0)
	}
}

// followMode is the entry's type, seen through symlinks.
func followMode(full string, e fs.DirEntry) (fs.FileMode, error) {
	if e.Type()&fs.ModeSymlink == 0 {
		return e.Type(), nil
	}
	info, err := os.Stat(full)
	if err != nil {
		return 0, err
	}
	return info.Mode(), nil
}

// read adds one script to the snapshot. A symlinked script is also watched
// through its target's folder, so editing the target reloads it.
func (s *scanner) read(w *walk, full, name string, symlink bool) {
	content, err := os.ReadFile(full)
	if err != nil {
		s.logSkip(name, err)
		return
	}
	if symlink {
		if real, err := filepath.EvalSymlinks(full); err == nil {
			s.watch(filepath.Dir(real))
		}
	}
	w.snap[name] = Source{Name: name, Path: full, Content: content, Hash: hashContent(content)}
}

// logSkip reports an entry left out of the scan. Entries that vanished
// mid-scan are routine (the next event triggers another rescan), so they are
// only logged at debug level.
func (s *scanner) logSkip(name string, err error) {
	if errors.Is(err, fs.ErrNotExist) {
		s.log.Debug("entry vanished during scan", keyPath, name, keyError, err)
		return
	}
	s.log.Warn("skip unreadable entry", keyPath, name, keyError, err)
}
