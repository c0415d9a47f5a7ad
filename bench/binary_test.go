package bench

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// deployedCopy copies the executable src into a new file and drops the copy from the page
// cache, so that the processes started from it load it from disk, as a deployed binary is
// loaded, and returns the copy's path.
//
// Without it, a Go contender's peak RSS includes an artefact of having just been built: the
// file the linker (or cp) has just written sits in the page cache in large folios, a process
// that maps it gets each folio it touches mapped whole (Linux 6.x), and its RSS counts them.
// The runner measured 72 MB of RSS idle at start-up from a fresh build and 44 MB from the
// same bytes read from disk; a runner in a pod reads its binary from an image layer, and the
// Node.js contender's binary has been on disk since it was installed.
func deployedCopy(b *testing.B, src string) string {
	b.Helper()
	dst := filepath.Join(b.TempDir(), filepath.Base(src))
	if err := copyExecutable(src, dst); err != nil {
		b.Fatalf("copy %s: %v", src, err)
	}
	return dst
}

// copyExecutable writes src's bytes to dst, flushes them to disk and evicts them from the page
// cache (clean, unmapped pages are dropped at once).
func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	defer func() { _ = out.Close() }()
	if _, err := io.Copy(out, in); err != nil {
		return err
	}
	if err := out.Sync(); err != nil {
		return err
	}
	return unix.Fadvise(int(out.Fd()), 0, 0, unix.FADV_DONTNEED)
}
