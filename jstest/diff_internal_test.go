package jstest

import (
	"strings"
	"testing"
	"time"
)

func TestLineDiff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, expected, received, want string
	}{
		{"equal", "a\nb", "a\nb", "  a\n  b"},
		{"line added at the end", "a\nb", "a\nb\nc", "  a\n  b\n+ c"},
		{"line changed", "a\nb\nc", "a\nx\nc", "  a\n- b\n+ x\n  c"},
		{"line removed", "a\nb\nc", "a\nc", "  a\n- b\n  c"},
		{"empty expected", "", "a", "- \n+ a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := lineDiff(tt.expected, tt.received)
			if want := "- Expected\n+ Received\n\n" + tt.want; got != want {
				t.Fatalf("diff:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// Two long texts differing in one line: the diff shows that line alone, quickly, where the
// table this replaced would have cost 10,000² cells.
func TestLineDiffOfLongTexts(t *testing.T) {
	t.Parallel()
	lines := make([]string, 10000)
	for i := range lines {
		lines[i] = "line " + strings.Repeat("x", i%7) + string(rune('a'+i%26))
	}
	expected := strings.Join(lines, "\n")
	lines[5000] = "changed"
	received := strings.Join(lines, "\n")
	start := time.Now()
	got := lineDiff(expected, received)
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("diff of 10,000 lines took %s", took)
	}
	var changed []string
	for _, l := range strings.Split(got, "\n")[3:] {
		if !strings.HasPrefix(l, "  ") {
			changed = append(changed, l)
		}
	}
	if strings.Join(changed, "|") != "- "+strings.Split(expected, "\n")[5000]+"|+ changed" {
		t.Fatalf("changed lines %q, want the one line replaced", changed)
	}
}
