package jstest

import (
	"strings"
	"time"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// diffTimeout bounds the diff of two long texts; past it the diff is still correct, only
// coarser (longer runs shown as removed and added).
const diffTimeout = time.Second

// lineDiff renders the difference between expected and received text, line by line, as
// Jest does: "- " for expected-only lines, "+ " for received-only, "  " for both. Lines are
// compared whole (go-diff's line mode: Myers' O(ND) algorithm over one rune per line), so the
// cost follows the size of the difference, not the product of the lengths.
func lineDiff(expected, received string) string {
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = diffTimeout
	// Every line ends with a newline, so a last line compares equal to the same line followed
	// by more.
	a, b, lines := dmp.DiffLinesToChars(expected+"\n", received+"\n")
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(a, b, false), lines)
	var out strings.Builder
	out.WriteString("- Expected\n+ Received\n\n")
	for _, d := range diffs {
		prefix := "  "
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			prefix = "- "
		case diffmatchpatch.DiffInsert:
			prefix = "+ "
		case diffmatchpatch.DiffEqual:
		}
		for _, l := range strings.SplitAfter(strings.TrimSuffix(d.Text, "\n"), "\n") {
			out.WriteString(prefix + strings.TrimSuffix(l, "\n") + "\n")
		}
	}
	return strings.TrimSuffix(out.String(), "\n")
}
