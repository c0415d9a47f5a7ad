package check

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// docSummary is a document as a test compares it: "File#Index[.Item] Kind name" or
// "File#Index error: message".
func docSummary(d Document) string {
	where := d.File + "#" + itoa(d.Index)
	if d.Item > 0 {
		where += "." + itoa(d.Item)
	}
	if d.Err != nil {
		return where + " error: " + d.Err.Error()
	}
	return where + " " + d.Object.GetKind() + " " + d.Object.GetName()
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content string
		want          []string
	}{
		{"multi-document YAML, empty documents not counted",
			"---\n# only a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
			[]string{"f#1 ConfigMap a", "f#2 ConfigMap b"}},
		{"a JSON object", `{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}`, []string{"f#1 Secret s"}},
		{"a JSON stream", `{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}} {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "t"}}`,
			[]string{"f#1 Secret s", "f#2 Secret t"}},
		{"a List's items", "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- {kind: ConfigMap, metadata: {name: b}}\n",
			[]string{"f#1.1 ConfigMap a", "f#1.2 error: not a manifest: no apiVersion"}},
		{"invalid YAML: the line is the file's, later documents still read",
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n   bad: indent\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
			[]string{"f#1 ConfigMap a", "f#2 error: invalid YAML: line 9: mapping values are not allowed in this context", "f#3 ConfigMap c"}},
		{"no apiVersion and no kind", "metadata: {name: a}\n", []string{"f#1 error: not a manifest: no apiVersion and no kind"}},
		{"no kind", "apiVersion: v1\nmetadata: {name: a}\n", []string{"f#1 error: not a manifest: no kind"}},
		{"a scalar", "just text\n", []string{"f#1 error: not a manifest: want an object with apiVersion and kind, got a string"}},
		{"a YAML list", "- a\n- b\n", []string{"f#1 error: not a manifest: want an object with apiVersion and kind, got a list"}},
		{"invalid JSON ends the file", `{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}} {"apiVersion": `,
			[]string{"f#1 Secret s", "f#2 error: invalid JSON: unexpected EOF"}},
		{"an empty file", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, d := range Parse("f", []byte(tt.content)) {
				got = append(got, docSummary(d))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Parse =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func cm(name string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\n"
}

func TestRead(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{
		"b.yaml": cm("b1") + "---\n" + cm("b2"), "a/z.yml": cm("az"), "a/y.json": `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ay"}}`,
		"README.md": "not a manifest", ".git/x.yaml": cm("hidden"), "c.YAML": cm("c"),
	})
	rel := func(name string) string { return filepath.Join(dir, filepath.FromSlash(name)) }
	tests := []struct {
		name  string
		paths []string
		stdin string
		want  []string
		err   string
	}{
		{"a folder, recursively, in name order; hidden folders and other files left out", []string{dir}, "",
			[]string{rel("a/y.json") + "#1 ConfigMap ay", rel("a/z.yml") + "#1 ConfigMap az", rel("b.yaml") + "#1 ConfigMap b1",
				rel("b.yaml") + "#2 ConfigMap b2", rel("c.YAML") + "#1 ConfigMap c"}, ""},
		{"files and stdin in the order given", []string{rel("c.YAML"), "-", rel("a/z.yml")}, cm("in1") + "---\n" + cm("in2"),
			[]string{rel("c.YAML") + "#1 ConfigMap c", "stdin#1 ConfigMap in1", "stdin#2 ConfigMap in2", rel("a/z.yml") + "#1 ConfigMap az"}, ""},
		{"a file of any extension when named", []string{rel("README.md")}, "", []string{rel("README.md") + "#1 error: not a manifest: want an object with apiVersion and kind, got a string"}, ""},
		{"stdin twice", []string{"-", "-"}, "", nil, "- (stdin) is given twice"},
		{"a missing file", []string{rel("nope.yaml")}, "", nil, "nope.yaml: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			docs, err := Read(tt.paths, strings.NewReader(tt.stdin))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Read err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range docs {
				got = append(got, docSummary(d))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Read =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
	empty := writeFiles(t, map[string]string{"notes.txt": "x"})
	if _, err := Read([]string{empty}, strings.NewReader("")); err == nil || !strings.Contains(err.Error(), "no *.yaml, *.yml or *.json file under "+empty) {
		t.Errorf("Read of a folder without manifests: err = %v", err)
	}
}
