package main

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestFormatVersion(t *testing.T) {
	t.Parallel()
	stamped := func(version string, settings ...string) *debug.BuildInfo {
		info := &debug.BuildInfo{Main: debug.Module{Version: version}}
		for i := 0; i+1 < len(settings); i += 2 {
			info.Settings = append(info.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return info
	}
	const rev = "0123456789abcdef0123456789abcdef01234567"
	goVersion := runtime.Version()
	tests := []struct {
		name           string
		linked, commit string
		info           *debug.BuildInfo
		want           string
	}{
		{"no build info", "", "", nil, "devel (" + goVersion + ")"},
		{"linker version wins", "v1.2.3", "", stamped("v0.9.0", "vcs.revision", rev), "v1.2.3 (" + goVersion + ", commit 0123456789ab)"},
		{"module version from go install", "", "", stamped("v0.9.0"), "v0.9.0 (" + goVersion + ")"},
		{"devel module", "", "", stamped("(devel)", "vcs.revision", rev, "vcs.modified", "false"), "devel (" + goVersion + ", commit 0123456789ab)"},
		{"dirty tree", "v1.2.3", "", stamped("(devel)", "vcs.revision", rev, "vcs.modified", "true"), "v1.2.3 (" + goVersion + ", commit 0123456789ab-dirty)"},
		{"short revision kept whole", "v1", "", stamped("", "vcs.revision", "abc"), "v1 (" + goVersion + ", commit abc)"},
		{"stamp wins over linker commit", "v1", "fedcba987654", stamped("", "vcs.revision", rev), "v1 (" + goVersion + ", commit 0123456789ab)"},
		{"linker commit without stamp", "v1", "fedcba987654", stamped("(devel)"), "v1 (" + goVersion + ", commit fedcba987654)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := formatVersion(tt.linked, tt.commit, tt.info); got != tt.want {
				t.Fatalf("formatVersion(%q) = %q, want %q", tt.linked, got, tt.want)
			}
		})
	}
}

// TestVersionFlag runs `runner --version`: it prints one line and needs no cluster or flags.
func TestVersionFlag(t *testing.T) {
	t.Parallel()
	out, err := execute(t, t.Context(), "--version")
	if err != nil {
		t.Fatalf("runner --version: %v", err)
	}
	want := "runner version " + versionString() + "\n"
	if out != want {
		t.Fatalf("runner --version printed %q, want %q", out, want)
	}
	if !strings.Contains(out, runtime.Version()) {
		t.Fatalf("runner --version printed %q, want the Go version in it", out)
	}
}
