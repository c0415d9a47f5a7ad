package plugins

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNewWatcherErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "a.js")
	writeFile(t, file, "x")
	tests := []struct {
		name     string
		dir      string
		notExist bool
		msg      string
	}{
		{name: "missing", dir: filepath.Join(dir, "nope"), notExist: true, msg: "does not exist"},
		{name: "file", dir: file, msg: "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewWatcher(tt.dir, Options{})
			if err == nil {
				t.Fatal("NewWatcher succeeded")
			}
			if got := errors.Is(err, fs.ErrNotExist); got != tt.notExist {
				t.Errorf("errors.Is(%v, fs.ErrNotExist) = %v", err, got)
			}
			if !strings.Contains(err.Error(), tt.msg) || !strings.Contains(err.Error(), tt.dir) {
				t.Errorf("error %q should name %s and say %q", err, tt.dir, tt.msg)
			}
		})
	}
}

func TestEmptyFolderSyncs(t *testing.T) {
	t.Parallel()
	h := start(t, t.TempDir(), Options{Debounce: fast})
	if got := describeAll(h.rec.all()); !slices.Equal(got, []string{"Synced"}) {
		t.Errorf("events = %q, want only Synced", got)
	}
}

func TestInitialScan(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"a.js": "a", "B.mjs": "B", "z.cjs": "z", "team/c.ts": "c", "team/sub/d.js": "d",
		"notes.txt": "n", "node_modules/m.js": "m", ".git/x.js": "x", "a.js~": "old",
	}
	tests := []struct {
		name string
		exts []string
		want []string
	}{
		{name: "default extensions", want: []string{"B.mjs", "a.js", "team/c.ts", "team/sub/d.js", "z.cjs"}},
		{name: "custom extensions", exts: []string{"JS", ".txt"}, want: []string{"a.js", "notes.txt", "team/sub/d.js"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, content := range files {
				writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), content)
			}
			mustDo(t, os.Symlink(".", filepath.Join(dir, "loop"))) // must not be walked forever
			h := start(t, dir, Options{Debounce: fast, Extensions: tt.exts})
			evs := h.rec.all()
			var want []string
			for _, name := range tt.want {
				want = append(want, loaded(name, files[name]))
			}
			want = append(want, "Synced")
			if got := describeAll(evs); !slices.Equal(got, want) {
				t.Fatalf("events:\n got %q\nwant %q", got, want)
			}
			for _, ev := range evs[:len(evs)-1] {
				checkSource(t, dir, ev.Source, files[ev.Source.Name])
			}
		})
	}
}

func checkSource(t *testing.T, dir string, src Source, content string) {
	t.Helper()
	if want := filepath.Join(dir, filepath.FromSlash(src.Name)); src.Path != want {
		t.Errorf("%s: Path = %q, want %q", src.Name, src.Path, want)
	}
	if string(src.Content) != content {
		t.Errorf("%s: Content = %q, want %q", src.Name, src.Content, content)
	}
}

// TestConfigMapVolume builds a volume the way the kubelet's atomic writer
// does and updates it by swapping the "..data" symlink.
func TestConfigMapVolume(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	v1 := map[string]string{"x.js": "x1", "team/y.js": "y1"}
	swapConfigMap(t, dir, "..2026_11_29_10_00_00.000000001", v1)
	mustDo(t, os.Symlink("..data/x.js", filepath.Join(dir, "x.js")))
	mustDo(t, os.Symlink("..data/team", filepath.Join(dir, "team")))
	h := start(t, dir, Options{Debounce: fast})
	want := []string{loaded("team/y.js", "y1"), loaded("x.js", "x1"), "Synced"}
	if got := describeAll(h.rec.all()); !slices.Equal(got, want) {
		t.Fatalf("initial events:\n got %q\nwant %q", got, want)
	}

	swapConfigMap(t, dir, "..2026_11_29_10_05_00.000000002", map[string]string{"x.js": "x2", "team/y.js": "y1"})
	h.waitFor("x.js reload", func([]string) bool { return len(h.changes()) >= 1 })
	h.settle()
	if got, want := h.changes(), []string{loaded("x.js", "x2")}; !slices.Equal(got, want) {
		t.Fatalf("after update:\n got %q\nwant %q", got, want)
	}

	// A key dropped from the ConfigMap loses its visible symlink too.
	swapConfigMap(t, dir, "..2026_11_29_10_10_00.000000003", map[string]string{"team/y.js": "y3"})
	mustDo(t, os.Remove(filepath.Join(dir, "x.js")))
	h.waitFor("second update", func([]string) bool { return len(h.changes()) >= 3 })
	h.settle()
	want = []string{loaded("x.js", "x2"), removed("x.js"), loaded("team/y.js", "y3")}
	if got := h.changes(); !slices.Equal(got, want) {
		t.Fatalf("after key removal:\n got %q\nwant %q", got, want)
	}
}

// swapConfigMap writes files into a new timestamped folder, points
// "..data_tmp" at it, renames that over "..data" and deletes the old folder.
func swapConfigMap(t *testing.T, dir, stamp string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		writeFile(t, filepath.Join(dir, stamp, filepath.FromSlash(name)), content)
	}
	old, _ := os.Readlink(filepath.Join(dir, "..data"))
	mustDo(t, os.Symlink(stamp, filepath.Join(dir, "..data_tmp")))
	mustDo(t, os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
	if old != "" {
		mustDo(t, os.RemoveAll(filepath.Join(dir, old)))
	}
}

// TestSymlinkToOutsideScript covers `ln -s ~/dev/x.js scripts/`: editing the
// target must reload the script even though the target's folder is elsewhere.
func TestSymlinkToOutsideScript(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "real.js")
	writeFile(t, target, "v1")
	mustDo(t, os.Symlink(target, filepath.Join(dir, "a.js")))
	h := start(t, dir, Options{Debounce: fast})
	atomicWrite(t, target, "v2")
	want := loaded("a.js", "v2")
	h.waitFor(want, func(evs []string) bool { return slices.Contains(evs, want) })
	mustDo(t, os.Remove(target))
	h.waitFor("removal", func(evs []string) bool { return slices.Contains(evs, removed("a.js")) })
	if got, want := h.changes(), []string{want, removed("a.js")}; !slices.Equal(got, want) {
		t.Fatalf("events:\n got %q\nwant %q", got, want)
	}
}

// TestRunStopsWithoutLeaks is not parallel: it counts the process's goroutines.
func TestRunStopsWithoutLeaks(t *testing.T) {
	before := runtime.NumGoroutine()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "team", "a.js"), "v1")
	w, err := NewWatcher(dir, Options{Debounce: fast})
	mustDo(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	synced, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- w.Run(ctx, func(ev Event) {
			if ev.Kind == Synced {
				close(synced)
			}
		})
	}()
	select {
	case <-synced:
	case err := <-done:
		t.Fatalf("Run returned before Synced: %v", err)
	}
	writeFile(t, filepath.Join(dir, "team", "b.js"), "v1") // leave a debounce timer pending
	cancel()
	select {
	case err := <-done:
		mustDo(t, err)
	case <-time.After(waitLimit):
		t.Fatal("Run did not return after cancel")
	}
	deadline := time.Now().Add(waitLimit)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines before Run, %d after:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}
