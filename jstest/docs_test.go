package jstest_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jsinformer/jsinformer/jstest"
)

// Every ```js block of docs/testing.md that declares a test runs, next to the example
// plugins it names, and passes.
func TestDocsExamplesPass(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "testing.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```js\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	ran := 0
	for i, b := range blocks {
		if !strings.Contains(b[1], "test(") {
			continue
		}
		dir := t.TempDir()
		for _, plugin := range regexp.MustCompile(`harness\("\./([^"]+)"`).FindAllStringSubmatch(b[1], -1) {
			src, err := os.ReadFile(filepath.Join("..", "examples", "scripts", plugin[1]))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, plugin[1]), src, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		path := filepath.Join(dir, "doc.test.js")
		if err := os.WriteFile(path, []byte(b[1]), 0o644); err != nil {
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
	if ran < 2 {
		t.Fatalf("ran %d blocks of docs/testing.md, want at least 2", ran)
	}
}
