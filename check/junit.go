package check

import (
	"cmp"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// JUnit XML, as CI systems read it (Jenkins, GitLab, GitHub Actions' reporters): a test suite
// per input file, a test case per (object, script) result, or one per object no script's
// webhook matched; problems are test cases with an error, the scripts' in a suite "scripts".
// A denial is a failure in mode enforce, and a passing case whose output says so in the
// others. No timings: the same input gives the same file.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Output    string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit prints the report as JUnit XML.
func WriteJUnit(w io.Writer, r *Report) error {
	doc := junitSuites{Name: "runner check"}
	suites := map[string]int{} // name -> index in doc.Suites
	add := func(suite string, c junitCase) {
		i, ok := suites[suite]
		if !ok {
			i = len(doc.Suites)
			suites[suite] = i
			doc.Suites = append(doc.Suites, junitSuite{Name: suite})
		}
		s := &doc.Suites[i]
		s.Cases = append(s.Cases, c)
		s.Tests++
		doc.Tests++
		if c.Failure != nil {
			s.Failures++
			doc.Failures++
		}
		if c.Error != nil {
			s.Errors++
			doc.Errors++
		}
	}
	r.inOrder(func(o Object) {
		for _, c := range objectCases(r.Mode, o) {
			add(o.File, c)
		}
	}, func(p Problem) {
		suite := cmp.Or(p.File, "scripts")
		add(suite, junitCase{Name: p.Where(), ClassName: suite, Error: &junitProblem{Message: p.Message, Type: "problem", Text: p.Message}})
	})
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write JUnit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// objectCases are an object's test cases: one per result, or one passing case when no
// script's webhook matched it.
func objectCases(mode Mode, o Object) []junitCase {
	if len(o.Results) == 0 {
		return []junitCase{{Name: o.Where(), ClassName: o.File, Output: "no script's webhook matches it"}}
	}
	out := make([]junitCase, 0, len(o.Results))
	for _, res := range o.Results {
		c := junitCase{Name: o.Where() + ": " + res.Script + " " + res.Webhook, ClassName: o.File, Output: caseOutput(mode, res)}
		switch {
		case res.Result == Error:
			c.Error = &junitProblem{Message: res.Message, Type: Error, Text: res.Message}
		case res.Result == Deny && mode == ModeEnforce:
			c.Failure = &junitProblem{Message: res.Message, Type: Deny, Text: res.Message}
		}
		out = append(out, c)
	}
	return out
}

// caseOutput is what a passing case says: its warnings, patch, audit, or a denial that the
// mode does not enforce.
func caseOutput(mode Mode, res Result) string {
	var lines []string
	switch res.Result {
	case Deny:
		if mode != ModeEnforce {
			lines = append(lines, fmt.Sprintf("denied (mode %s): %s", mode, res.Message))
		}
	case Audit:
		lines = append(lines, "audit: "+res.Message)
	case Mutate:
		lines = append(lines, "patch: "+string(res.Patch))
	}
	for _, w := range res.Warnings {
		lines = append(lines, "warning: "+w)
	}
	return strings.Join(lines, "\n")
}
