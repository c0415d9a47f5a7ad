package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// baselineEnv names a git commit (anything `git archive` takes) whose runner the process
// benchmarks run as an extra contender, so a change is compared with the code before it in
// the same run: JSINFORMER_BENCH_BASELINE=9fe2c6a.
const baselineEnv = "JSINFORMER_BENCH_BASELINE"

// baselineRunner builds the runner of $JSINFORMER_BENCH_BASELINE from a clean export of that
// commit (git archive, so the repository and its worktrees are not touched) and returns the
// binary's path and the commit as given; "" and "" when the variable is unset.
func baselineRunner(b *testing.B) (bin, commit string) {
	b.Helper()
	commit = strings.TrimSpace(os.Getenv(baselineEnv))
	if commit == "" {
		return "", ""
	}
	src := b.TempDir()
	archive := exec.CommandContext(b.Context(), "sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`,
		"sh", repoRoot(b), commit, src)
	if out, err := archive.CombinedOutput(); err != nil {
		b.Fatalf("export %s=%s: %v\n%s", baselineEnv, commit, err, out)
	}
	bin = filepath.Join(b.TempDir(), "runner-"+commit)
	build := exec.CommandContext(b.Context(), "go", "build", "-o", bin, "./cmd/runner")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build the runner of %s: %v\n%s", commit, err, out)
	}
	return bin, commit
}

// repoRoot is the root of the git work tree holding this package.
func repoRoot(b *testing.B) string {
	b.Helper()
	out, err := exec.CommandContext(b.Context(), "git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		b.Fatalf("find the repository root: %v", err)
	}
	return strings.TrimSpace(string(out))
}
