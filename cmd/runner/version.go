package main

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// version is the release this binary was built as, set by the linker:
//
//	go build -ldflags "-X main.version=v0.3.0" ./cmd/runner
//
// `make build` and `make image` set it from `git describe`. Left empty, the module version
// recorded by `go install ...@version` is used, else "devel".
var version string

// commit is the revision to report when the binary has no VCS stamp: the go command does not
// stamp builds from a git worktree, where .git is a file. `make build` sets it.
var commit string

// versionString is what `runner --version` prints after "runner ":
// "v0.3.0 (go1.26.8, commit 0123456789ab)". The commit comes from the VCS stamp the go command
// embeds (-buildvcs), with "-dirty" when the work tree had uncommitted changes, else from the
// linker-set commit; it is left out when there is neither.
func versionString() string {
	info, _ := debug.ReadBuildInfo()
	return formatVersion(version, commit, info)
}

// formatVersion renders a version line from the linker-set version and commit and the build
// info (nil when the binary has none).
func formatVersion(linked, linkedCommit string, info *debug.BuildInfo) string {
	v := linked
	if v == "" && info != nil && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	if v == "" {
		v = "devel"
	}
	details := []string{runtime.Version()}
	c := vcsCommit(info)
	if c == "" {
		c = linkedCommit
	}
	if c != "" {
		details = append(details, "commit "+c)
	}
	return v + " (" + strings.Join(details, ", ") + ")"
}

// vcsCommit is the short revision from the build info's VCS stamp, "" when there is none.
func vcsCommit(info *debug.BuildInfo) string {
	if info == nil {
		return ""
	}
	var revision, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if len(revision) > 12 {
		revision = revision[:12]
	}
	if revision != "" && modified == "true" {
		revision += "-dirty"
	}
	return revision
}
