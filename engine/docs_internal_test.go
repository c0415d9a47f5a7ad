package engine

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The loads row of the metrics table in docs/scripts.md lists every result the engine
// counts: the literal labels of jsinformer_script_loads_total in the engine's source and
// its series'.
func TestDocsListEveryLoadResult(t *testing.T) {
	t.Parallel()
	literal := regexp.MustCompile(`loads\.WithLabelValues\([^,]+, "(\w+)"\)|result\s*:?=\s*"(\w+)"`)
	// The loader names loaded and reloaded; the series (enginemetrics) name the others.
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	series, err := filepath.Glob(filepath.Join("internal", "enginemetrics", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, series...)
	results := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range literal.FindAllStringSubmatch(string(src), -1) {
			results[m[1]+m[2]] = true
		}
	}
	if len(results) < 3 {
		t.Fatalf("found results %v in the source; the pattern no longer matches it", results)
	}
	docs, err := os.ReadFile(filepath.Join("..", "docs", "scripts.md"))
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for line := range strings.Lines(string(docs)) {
		if strings.HasPrefix(line, "| `jsinformer_script_loads_total`") {
			row = line
		}
	}
	for r := range results {
		if !strings.Contains(row, "`"+r+"`") {
			t.Errorf("docs/scripts.md: the jsinformer_script_loads_total row lacks result `%s`: %q", r, row)
		}
	}
}
