package check

import (
	"fmt"
	"io"
	"strings"
)

// WriteText prints the report for people: a line per problem and per result worth reading
// (denials, warnings, patches, audits, errors; every result in mode audit), in the input's
// order, the scripts' problems first, and a summary.
func WriteText(w io.Writer, r *Report) error {
	var b strings.Builder
	r.inOrder(func(o Object) { writeObject(&b, r.Mode, o) }, func(p Problem) { writeProblem(&b, p) })
	b.WriteString(summaryLine(r))
	_, err := io.WriteString(w, b.String())
	return err
}

func writeProblem(b *strings.Builder, p Problem) {
	fmt.Fprintf(b, "ERROR   %s: %s\n", p.Where(), oneLine(p.Message))
}

func writeObject(b *strings.Builder, mode Mode, o Object) {
	line := func(label, script, msg string) {
		fmt.Fprintf(b, "%-7s %s: %s: %s\n", label, o.Where(), script, oneLine(msg))
	}
	if len(o.Results) == 0 && mode == ModeAudit {
		fmt.Fprintf(b, "%-7s %s: no script's webhook matches it\n", "SKIP", o.Where())
	}
	for _, res := range o.Results {
		switch res.Result {
		case Deny:
			if mode == ModeWarn {
				line("WARN", res.Script, "would be denied: "+res.Message)
			} else {
				line("DENY", res.Script, res.Message)
			}
		case Error:
			line("ERROR", res.Script, res.Message)
		case Audit:
			line("AUDIT", res.Script, res.Message)
		case Mutate:
			line("MUTATE", res.Script, string(res.Patch))
		case Pass:
			if mode == ModeAudit {
				line("PASS", res.Script, res.Webhook)
			}
		}
		if res.Result != Error {
			for _, warning := range res.Warnings {
				line("WARN", res.Script, warning)
			}
		}
	}
}

func summaryLine(r *Report) string {
	s := r.Summary()
	line := fmt.Sprintf("checked %s from %s with %s (mode %s): %d denied, %d warned, %d mutated, %d audited, %s",
		plural(s.Objects, "object"), plural(r.Files, "file"), plural(len(r.Scripts), "admission script"), r.Mode,
		s.Denied, s.Warned, s.Mutated, s.Audited, plural(s.Errors, "error"))
	if s.Problems > 0 {
		line += ", " + plural(s.Problems, "problem")
	}
	return line + "\n"
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// oneLine keeps a message on its line: a script's multi-line message is indented under it.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n        ")
}
