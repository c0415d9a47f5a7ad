package plugins

import (
	"slices"
	"testing"
)

func TestIsScript(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want bool
	}{
		{"a.js", true}, {"a.mjs", true}, {"a.cjs", true}, {"a.ts", true}, {"A.JS", true},
		{"team.v2.js", true},
		{"a.js~", false}, {"a.js.swp", false}, {"a.js.swx", false}, {"a.js.swo", false},
		{"a.js.tmp", false}, {".a.js.tmp123", false}, {"#a.js#", false}, {".#a.js", false},
		{"4913", false}, {".a.js", false}, {"..data", false}, {"types.d.ts", false},
		{"a.json", false}, {"a.txt", false}, {"js", false}, {"Makefile", false},
		{"labels.test.js", false}, {"labels.test.ts", false}, {"Labels.Test.JS", false}, {"latest.js", true}, {"test.js", true},
	}
	for _, tt := range tests {
		if got := isScript(tt.name, defaultExtensions); got != tt.want {
			t.Errorf("isScript(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestDroppingsWithCustomExtensions checks that droppings stay ignored even
// when the extension list would match them.
func TestDroppingsWithCustomExtensions(t *testing.T) {
	t.Parallel()
	exts := normalizeExtensions([]string{".tmp", "swp", ""})
	for _, name := range []string{"x.tmp", "x.swp", "#x.tmp", "4913"} {
		if isScript(name, exts) {
			t.Errorf("isScript(%q, %q) = true", name, exts)
		}
	}
}

func TestNormalizeExtensions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want []string
	}{
		{nil, defaultExtensions},
		{[]string{}, defaultExtensions},
		{[]string{"JS", " .Ts ", ""}, []string{".js", ".ts"}},
	}
	for _, tt := range tests {
		if got := normalizeExtensions(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("normalizeExtensions(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSkipDir(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{"node_modules": true, ".git": true, "..data": true, "team": false} {
		if got := skipDir(name); got != want {
			t.Errorf("skipDir(%q) = %v, want %v", name, got, want)
		}
	}
}
