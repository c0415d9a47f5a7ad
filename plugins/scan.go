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
	root     string
	exts     []string
	log      *slog.Logger
	watch    func(dir string) // best effort; failures are the callee's to log
	readFile func(path string) ([]byte, error)
}

// walk is the state of one scan.
type walk struct {
	snap map[string]Source
	seen map[string]bool // real paths of folders entered, against symlink loops
	kept []string        // unreadable scripts, and "folder/" prefixes of unreadable folders
}

// scan returns every readable script by Name, and the names (or "folder/"
// prefixes) of scripts that exist but cannot be read: what was emitted for
// those stands, as for a broken save. Problems below the root are logged; only
// an unreadable root fails.
func (s *scanner) scan() (snap map[string]Source, kept []string, err error) {
	w := &walk{snap: map[string]Source{}, seen: map[string]bool{}}
	if err := s.walkDir(w, s.root, ""); err != nil {
		return nil, nil, err
	}
	return w.snap, w.kept, nil
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
		s.unreadable(w, relName+"/", err) // a folder or a script: keep whatever was under it
		return
	}
	switch {
	case mode.IsDir() && !skipDir(name):
		if err := s.walkDir(w, full, relName); err != nil {
			s.unreadable(w, relName+"/", err)
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
	content, err := s.readFile(full)
	if err != nil {
		s.unreadable(w, name, err)
		return
	}
	if symlink {
		if real, err := filepath.EvalSymlinks(full); err == nil {
			s.watch(filepath.Dir(real))
		}
	}
	w.snap[name] = Source{Name: name, Path: full, Content: content, Hash: hashContent(content)}
}

// unreadable handles an entry that could not be read. One that vanished
// mid-scan is routine (the next event triggers another rescan) and absent; any
// other failure (permissions, I/O) leaves the entry as last emitted: name is a
// script, or "folder/" for everything under a folder.
func (s *scanner) unreadable(w *walk, name string, err error) {
	if errors.Is(err, fs.ErrNotExist) {
		s.log.Debug("entry vanished during scan", keyPath, name, keyError, err)
		return
	}
	w.kept = append(w.kept, name)
	s.log.Error("cannot read script; its running version stays", keyPath, name, keyError, err)
}
