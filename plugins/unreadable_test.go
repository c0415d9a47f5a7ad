package plugins

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// failReads makes reading the files whose path ends in one of suffixes fail with a permission
// error while on is set: chmod 000 does not stop root, which tests may run as.
func failReads(on *atomic.Bool, suffixes ...string) func(*Watcher) {
	return func(w *Watcher) {
		w.readFile = func(path string) ([]byte, error) {
			for _, s := range suffixes {
				if on.Load() && strings.HasSuffix(filepath.ToSlash(path), s) {
					return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrPermission}
				}
			}
			return os.ReadFile(path)
		}
	}
}

// A script that becomes unreadable keeps what was emitted for it, like a broken save; when it
// is readable again, only a changed content is emitted.
func TestUnreadableScriptKeepsItsVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.js"), "v1")
	writeFile(t, filepath.Join(dir, "team", "b.js"), "v1")
	var unreadable atomic.Bool
	h := startWith(t, dir, Options{Debounce: fast}, failReads(&unreadable, "/a.js", "/team/b.js"))
	unreadable.Store(true)
	writeFile(t, filepath.Join(dir, "a.js"), "v2") // a change the watcher cannot read
	mustDo(t, os.Chtimes(filepath.Join(dir, "team", "b.js"), time.Now(), time.Now()))
	h.settle()
	if got := h.changes(); len(got) != 0 {
		t.Fatalf("events while unreadable: %q, want none", got)
	}
	h.waitLog("ERROR cannot read script; its running version stays")
	unreadable.Store(false)
	atomicWrite(t, filepath.Join(dir, "team", "b.js"), "v1") // readable again, same content; in one step, never seen empty
	h.settle()
	want := []string{loaded("a.js", "v2")}
	if got := h.changes(); !slices.Equal(got, want) {
		t.Fatalf("events after it is readable again: %q, want %q", got, want)
	}
}

// A folder that cannot be read keeps the scripts under it.
func TestUnreadableFolderKeepsItsScripts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "team", "b.js"), "v1")
	h := start(t, dir, Options{Debounce: fast})
	// A folder whose stat fails with an error other than "not found": permissions cannot
	// make one for root, so use a symlink to itself ("too many levels of symbolic links").
	mustDo(t, os.RemoveAll(filepath.Join(dir, "team")))
	mustDo(t, os.Symlink("team", filepath.Join(dir, "team")))
	h.settle()
	if got := h.changes(); len(got) != 0 {
		t.Fatalf("events: %q, want none: the folder exists but cannot be read", got)
	}
	h.waitLog("ERROR cannot read script; its running version stays")
}

// A scripts folder that is removed keeps its scripts running, and is watched again once it is
// back.
func TestRemovedFolderIsWatchedAgain(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	dir := filepath.Join(parent, "scripts")
	writeFile(t, filepath.Join(dir, "a.js"), "v1")
	writeFile(t, filepath.Join(dir, "gone.js"), "v1")
	h := startWith(t, dir, Options{Debounce: fast}, func(w *Watcher) { w.rootPoll = 20 * time.Millisecond })
	mustDo(t, os.RemoveAll(dir))
	h.waitLog("ERROR scripts folder is gone; its scripts keep running until it is back")
	if got := h.changes(); len(got) != 0 {
		t.Fatalf("events after the folder was removed: %q, want none", got)
	}
	// In one step each: the folder is polled for, so a rescan may come between any two steps.
	atomicWrite(t, filepath.Join(dir, "a.js"), "v1")
	atomicWrite(t, filepath.Join(dir, "b.js"), "v1")
	h.waitLog("INFO scripts folder is back; watching it again")
	h.settle() // the sentinel's event proves the new folder is watched
	atomicWrite(t, filepath.Join(dir, "a.js"), "v2")
	h.settle()
	want := []string{removed("gone.js"), loaded("b.js", "v1"), loaded("a.js", "v2")}
	if got := h.changes(); !slices.Equal(got, want) {
		t.Fatalf("events: %q, want %q", got, want)
	}
}
