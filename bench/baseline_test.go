package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// baselineEnv names a git commit (anything `git archive` takes) whose runner the process
// benchmarks run as an extra contender, so a change is compared with the code before it in
// the same run: JSINFORMER_BENCH_BASELINE=9fe2c6a.
const baselineEnv = "JSINFORMER_BENCH_BASELINE"

// baseline is the runner built from $JSINFORMER_BENCH_BASELINE, once per process, under
// baselineDir, which TestMain removes.
var (
	baselineOnce sync.Once
	baselineBin  string
	baselineErr  error
	baselineDir  string
)

// baselineRunner builds the runner of $JSINFORMER_BENCH_BASELINE from a clean export of that
// commit (git archive, so the repository and its worktrees are not touched), once per process,
// and returns the binary's path and the commit as given; "" and "" when the variable is unset.
func baselineRunner(b *testing.B) (bin, commit string) {
	b.Helper()
	commit = strings.TrimSpace(os.Getenv(baselineEnv))
	if commit == "" {
		return "", ""
	}
	baselineOnce.Do(func() { baselineBin, baselineErr = buildBaseline(b, commit) })
	if baselineErr != nil {
		b.Fatal(baselineErr)
	}
	return baselineBin, commit
}

func buildBaseline(b *testing.B, commit string) (string, error) {
	var err error
	if baselineDir, err = os.MkdirTemp("", "jsinformer-baseline-"); err != nil {
		return "", fmt.Errorf("make a folder for the baseline: %w", err)
	}
	src := filepath.Join(baselineDir, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		return "", err
	}
	archive := exec.CommandContext(b.Context(), "sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`,
		"sh", repoRoot(b), commit, src)
	if out, err := archive.CombinedOutput(); err != nil {
		return "", fmt.Errorf("export %s=%s: %w\n%s", baselineEnv, commit, err, out)
	}
	bin := filepath.Join(baselineDir, "runner-"+commit)
	build := exec.CommandContext(b.Context(), "go", "build", "-o", bin, "./cmd/runner")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the runner of %s: %w\n%s", commit, err, out)
	}
	return bin, nil
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
