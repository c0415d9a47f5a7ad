package jstest

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Summary counts the tests of a run.
type Summary struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	// Errors counts the test files that could not be run.
	Errors int `json:"errors"`
	// NotLoaded counts the plugins of the test files' folders that do not load.
	NotLoaded int `json:"notLoaded"`
}

// Summarize counts results.
func Summarize(results []FileResult) Summary {
	var s Summary
	for _, f := range results {
		switch {
		case f.Plugin:
			s.NotLoaded++
		case f.Error != "":
			s.Errors++
		}
		for _, t := range f.Tests {
			switch t.Status {
			case Passed:
				s.Passed++
			case Failed:
				s.Failed++
			case Skipped:
				s.Skipped++
			}
		}
	}
	return s
}

// String is the summary line: "3 passed, 1 failed", with skipped tests, broken test files
// and plugins that do not load when there are any.
func (s Summary) String() string {
	line := fmt.Sprintf("%d passed, %d failed", s.Passed, s.Failed)
	if s.Skipped > 0 {
		line += fmt.Sprintf(", %d skipped", s.Skipped)
	}
	if s.Errors > 0 {
		line += fmt.Sprintf(", %d file(s) not run", s.Errors)
	}
	if s.NotLoaded > 0 {
		line += fmt.Sprintf(", %d plugin(s) not loaded", s.NotLoaded)
	}
	return line
}

// WriteText prints one line per test, the details of each failure under it, and the
// summary line.
func WriteText(w io.Writer, results []FileResult) {
	for _, f := range results {
		if f.Error != "" {
			fmt.Fprintf(w, "ERROR %s: %s\n", f.File, f.Error)
		}
		for _, t := range f.Tests {
			switch t.Status {
			case Passed:
				fmt.Fprintf(w, "PASS  %s > %s (%s)\n", f.File, t.Name, ms(t.DurationMS))
			case Skipped:
				fmt.Fprintf(w, "SKIP  %s > %s\n", f.File, t.Name)
			default:
				fmt.Fprintf(w, "FAIL  %s > %s (%s)\n", f.File, t.Name, ms(t.DurationMS))
				writeFailure(w, t.Failure)
			}
		}
	}
	fmt.Fprintln(w, Summarize(results))
}

func writeFailure(w io.Writer, fl *Failure) {
	if fl == nil {
		return
	}
	fmt.Fprintln(w, indent(fl.Message, "      "))
	if fl.File != "" {
		fmt.Fprintf(w, "\n      at %s:%d:%d\n", fl.File, fl.Line, fl.Column)
	}
	fmt.Fprintln(w)
}

func indent(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n")
}

func ms(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.1fms", v)
	}
	return fmt.Sprintf("%.0fms", v)
}

// WriteJSON writes the results and the summary as one JSON document.
func WriteJSON(w io.Writer, results []FileResult) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Files   []FileResult `json:"files"`
		Summary Summary      `json:"summary"`
	}{results, Summarize(results)})
}
