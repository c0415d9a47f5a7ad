package plugins

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestFolderChanges makes each kind of change people and tools really make to
// a scripts folder and checks the exact events that follow, nothing more. That
// a change of several steps makes one event holds only when its steps share
// one quiet period: when the machine stalls the test for longer than the
// debounce, the events may show intermediate states, and what is checked is
// that they end in the same state.
func TestFolderChanges(t *testing.T) {
	t.Parallel()
	const v1, v2 = "export default { onAdd() {} };\n", "export default { onDelete() {} };\n"
	tests := []struct {
		name     string
		debounce time.Duration
		files    map[string]string // present before Run
		change   func(t *testing.T, dir string)
		want     []string
	}{
		{
			name: "create", debounce: slow,
			change: func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "a.js"), v1) },
			want:   []string{loaded("a.js", v1)},
		},
		{
			name: "in-place write", debounce: fast, files: map[string]string{"a.js": v1},
			change: func(t *testing.T, dir string) { appendFile(t, filepath.Join(dir, "a.js"), "// more\n") },
			want:   []string{loaded("a.js", v1+"// more\n")},
		},
		{
			name: "truncate then write in steps", debounce: slow, files: map[string]string{"a.js": v1},
			change: func(t *testing.T, dir string) { slowRewrite(t, filepath.Join(dir, "a.js"), v2) },
			want:   []string{loaded("a.js", v2)},
		},
		{
			name: "truncated and left empty", debounce: fast, files: map[string]string{"a.js": v1},
			change: func(t *testing.T, dir string) { mustDo(t, os.Truncate(filepath.Join(dir, "a.js"), 0)) },
			want:   []string{loaded("a.js", "")},
		},
		{
			name: "editor atomic save", debounce: fast, files: map[string]string{"a.js": v1},
			change: func(t *testing.T, dir string) { atomicWrite(t, filepath.Join(dir, "a.js"), v2) },
			want:   []string{loaded("a.js", v2)},
		},
		{
			name: "vim save with backup", debounce: slow, files: map[string]string{"a.js": v1},
			change: func(t *testing.T, dir string) { vimSave(t, filepath.Join(dir, "a.js"), v2) },
			want:   []string{loaded("a.js", v2)},
		},
		{
			name: "cp over", debounce: slow, files: map[string]string{"a.js": v1},
			change: func(t *testing.T, dir string) { cpOver(t, filepath.Join(dir, "a.js"), v2) },
			want:   []string{loaded("a.js", v2)},
		},
		{
			name: "mv in from outside", debounce: fast,
			change: func(t *testing.T, dir string) {
				src := filepath.Join(t.TempDir(), "a.js")
				writeFile(t, src, v1)
				mustDo(t, os.Rename(src, filepath.Join(dir, "a.js")))
			},
			want: []string{loaded("a.js", v1)},
		},
		{
			name: "mv out", debounce: fast, files: map[string]string{"a.js": v1},
			change: func(t *testing.T, dir string) {
				mustDo(t, os.Rename(filepath.Join(dir, "a.js"), filepath.Join(t.TempDir(), "a.js")))
			},
			want: []string{removed("a.js")},
		},
		{
			name: "rename within the folder", debounce: fast, files: map[string]string{"a.js": v1},
			change: func(t *testing.T, dir string) {
				mustDo(t, os.Rename(filepath.Join(dir, "a.js"), filepath.Join(dir, "b.js")))
			},
			want: []string{removed("a.js"), loaded("b.js", v1)},
		},
		{
			name: "rename to a non-script", debounce: fast, files: map[string]string{"a.js": v1},
			change: func(t *testing.T, dir string) {
				mustDo(t, os.Rename(filepath.Join(dir, "a.js"), filepath.Join(dir, "a.js.disabled")))
			},
			want: []string{removed("a.js")},
		},
		{
			name: "rm", debounce: fast, files: map[string]string{"a.js": v1, "b.js": v2},
			change: func(t *testing.T, dir string) { mustDo(t, os.Remove(filepath.Join(dir, "a.js"))) },
			want:   []string{removed("a.js")},
		},
		{
			name: "rm of a subfolder", debounce: fast, files: map[string]string{"team/a.js": v1, "team/b.ts": v2},
			change: func(t *testing.T, dir string) { mustDo(t, os.RemoveAll(filepath.Join(dir, "team"))) },
			want:   []string{removed("team/a.js"), removed("team/b.ts")},
		},
		{
			name: "new subfolder created later", debounce: slow,
			change: func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "team", "deep", "a.mjs"), v1) },
			want:   []string{loaded("team/deep/a.mjs", v1)},
		},
		{
			name: "write in existing subfolder", debounce: fast, files: map[string]string{"team/a.js": v1},
			change: func(t *testing.T, dir string) { atomicWrite(t, filepath.Join(dir, "team", "a.js"), v2) },
			want:   []string{loaded("team/a.js", v2)},
		},
		{
			name: "same content rewritten", debounce: slow, files: map[string]string{"a.js": v1},
			change: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, "a.js"), v1)
				atomicWrite(t, filepath.Join(dir, "a.js"), v1)
			},
			want: []string{},
		},
		{
			name: "ignored droppings", debounce: fast, files: map[string]string{"a.js": v1},
			change: makeDroppings,
			want:   []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, content := range tt.files {
				writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), content)
			}
			h := start(t, dir, Options{Debounce: tt.debounce})
			began := time.Now()
			tt.change(t, dir)
			took := time.Since(began)
			h.waitFor("the expected number of events", func([]string) bool { return len(h.changes()) >= len(tt.want) })
			h.settle()
			got := h.changes()
			if took < tt.debounce {
				if !slices.Equal(got, tt.want) {
					t.Errorf("events after Synced:\n got %q\nwant %q", got, tt.want)
				}
				return
			}
			t.Logf("the change took %v, longer than the %v debounce: intermediate states may show", took, tt.debounce)
			if end, want := endState(tt.files, got), endState(tt.files, tt.want); !maps.Equal(end, want) {
				t.Errorf("events after Synced %q end in %v, want %v", got, end, want)
			}
		})
	}
}

// endState is the scripts and hashes that the events, applied to files, leave.
func endState(files map[string]string, events []string) map[string]string {
	state := map[string]string{}
	for name, content := range files {
		state[name] = hashContent([]byte(content))
	}
	for _, ev := range events {
		switch f := strings.Fields(ev); f[0] {
		case "Loaded":
			state[f[1]] = f[2]
		case "Removed":
			delete(state, f[1])
		}
	}
	return state
}

func appendFile(t *testing.T, path, content string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	mustDo(t, err)
	_, err = f.WriteString(content)
	mustDo(t, err)
	mustDo(t, f.Close())
}

// slowRewrite truncates, then writes the content in two halves, pausing (for
// less than the debounce) after each step, as a slow writer would.
func slowRewrite(t *testing.T, path, content string) {
	t.Helper()
	const pause = 20 * time.Millisecond
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	mustDo(t, err)
	defer f.Close()
	time.Sleep(pause)
	half := len(content) / 2
	_, err = f.WriteString(content[:half])
	mustDo(t, err)
	time.Sleep(pause)
	_, err = f.WriteString(content[half:])
	mustDo(t, err)
	mustDo(t, f.Close())
}

// vimSave replays vim's default save: probe writability with "4913", move the
// original to a backup, write the new file, delete the backup.
func vimSave(t *testing.T, path, content string) {
	t.Helper()
	probe := filepath.Join(filepath.Dir(path), "4913")
	writeFile(t, probe, "")
	mustDo(t, os.Remove(probe))
	mustDo(t, os.Rename(path, path+"~"))
	writeFile(t, path, content)
	mustDo(t, os.Remove(path+"~"))
}

// cpOver runs the real cp, which truncates the target and writes into it.
func cpOver(t *testing.T, path, content string) {
	t.Helper()
	cp, err := exec.LookPath("cp")
	if err != nil {
		t.Fatalf("find cp: %v", err)
	}
	src := filepath.Join(t.TempDir(), "new.js")
	writeFile(t, src, content)
	if out, err := exec.Command(cp, src, path).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
}

// makeDroppings leaves behind everything editors and tools create that is not
// a script, including script-named files where scripts are never looked for.
func makeDroppings(t *testing.T, dir string) {
	t.Helper()
	for _, name := range []string{
		"a.js~", ".a.js.swp", "a.js.swp", "a.js.swx", "a.js.swo", "a.js.tmp", ".a.js.tmp123",
		"#a.js#", "4913", ".hidden.js", "notes.txt", "README.md", "types.d.ts", "a.json",
		"node_modules/lib/index.js", ".git/hooks/x.js", "team/.cache/x.js",
	} {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), "// not a script\n")
	}
	// Emacs lock files are dangling symlinks.
	mustDo(t, os.Symlink("user@host.1234:1", filepath.Join(dir, ".#a.js")))
	mustDo(t, os.Remove(filepath.Join(dir, "4913")))
}
