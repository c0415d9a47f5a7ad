package check

import (
	"encoding/json"
	"io"
)

// jsonReport is the document WriteJSON prints: the report, its summary and exit code.
type jsonReport struct {
	*Report
	Summary  Summary `json:"summary"`
	ExitCode int     `json:"exitCode"`
}

// WriteJSON prints the report as one JSON document: every object with every result (passes
// included, whatever the mode), the problems, the summary and the exit code.
func WriteJSON(w io.Writer, r *Report) error {
	out := *r
	if out.Scripts == nil {
		out.Scripts = []string{}
	}
	if out.Objects == nil {
		out.Objects = []Object{}
	}
	if out.Problems == nil {
		out.Problems = []Problem{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(jsonReport{Report: &out, Summary: r.Summary(), ExitCode: r.ExitCode()})
}
