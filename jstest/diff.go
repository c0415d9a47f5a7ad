package jstest

import "strings"

// maxDiffLines bounds the quadratic line diff; longer texts are shown whole, one after the
// other.
const maxDiffLines = 2000

// lineDiff renders the difference between expected and received text, line by line, as
// Jest does: "- " for expected-only lines, "+ " for received-only, "  " for both.
func lineDiff(expected, received string) string {
	a, b := strings.Split(expected, "\n"), strings.Split(received, "\n")
	var out strings.Builder
	out.WriteString("- Expected\n+ Received\n\n")
	if len(a) > maxDiffLines || len(b) > maxDiffLines {
		for _, l := range a {
			out.WriteString("- " + l + "\n")
		}
		for _, l := range b {
			out.WriteString("+ " + l + "\n")
		}
		return strings.TrimSuffix(out.String(), "\n")
	}
	// lcs[i][j] is the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out.WriteString("  " + a[i] + "\n")
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			out.WriteString("- " + a[i] + "\n")
			i++
		default:
			out.WriteString("+ " + b[j] + "\n")
			j++
		}
	}
	return strings.TrimSuffix(out.String(), "\n")
}
