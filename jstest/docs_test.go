package jstest_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jsinformer/jsinformer/jstest"
)

// Every ```js and ```ts block of docs/testing.md that declares a test runs, next to the
// example plugins and the CRD fixtures (../crds/) it names, and passes.
func TestDocsExamplesPass(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "testing.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```(js|ts)\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	ran := 0
	for i, b := range blocks {
		lang, code := b[1], b[2]
		if !strings.Contains(code, "test(") {
			continue
		}
		dir := filepath.Join(t.TempDir(), "scripts")
		copyNamed(t, code, `harness\("\./([^"]+)"`, filepath.Join("..", "examples", "scripts"), dir)
		copyNamed(t, code, `"\.\./crds/([^"]+)"`, filepath.Join("..", "examples", "crds"), filepath.Join(dir, "..", "crds"))
		path := filepath.Join(dir, "doc.test."+lang)
		if err := os.WriteFile(path, []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}
		res := jstest.RunFile(t.Context(), path, jstest.Options{})
		if res.Error != "" || len(res.Tests) == 0 {
			t.Errorf("block %d: %+v", i, res)
		}
		for _, tr := range res.Tests {
			if tr.Status != jstest.Passed {
				t.Errorf("block %d, %s: %s", i, tr.Name, tr.Failure)
			}
		}
		ran++
	}
	if ran < 3 {
		t.Fatalf("ran %d blocks of docs/testing.md, want at least 3", ran)
	}
}

// copyNamed copies the files of from that code names (the first group of pattern) into dir.
func copyNamed(t *testing.T, code, pattern, from, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(pattern).FindAllStringSubmatch(code, -1) {
		src, err := os.ReadFile(filepath.Join(from, m[1]))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, m[1]), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
