package check

import (
	"encoding/json"
	"fmt"
)

// Mode is how results are reported and what fails the check (--mode).
type Mode string

const (
	// ModeEnforce reports what the API server would do: a denial fails the check (exit 1).
	ModeEnforce Mode = "enforce"
	// ModeWarn reports denials as warnings; they do not fail the check.
	ModeWarn Mode = "warn"
	// ModeAudit reports every result, passes included; denials do not fail the check.
	ModeAudit Mode = "audit"
)

// Modes are the modes, in the order --help lists them.
var Modes = []Mode{ModeEnforce, ModeWarn, ModeAudit}

// The results a script's webhook call can have.
const (
	Pass   = "pass"
	Deny   = "deny"
	Warn   = "warn"   // allowed with warnings (a denial of a script in admission mode warn among them)
	Mutate = "mutate" // allowed with a patch
	Audit  = "audit"  // a script in admission mode audit would have denied or patched
	Error  = "error"  // the script threw, timed out or returned what it may not
)

// Report is a check's outcome.
type Report struct {
	Mode Mode `json:"mode"`
	// Scripts are the admission scripts loaded, by name in the scripts folder.
	Scripts []string `json:"scripts"`
	// Files is how many files the documents came from.
	Files    int       `json:"files"`
	Objects  []Object  `json:"objects"`
	Problems []Problem `json:"problems"`
}

// Object is one manifest checked: where it was read, what it is, whether the API server
// would have stored it, and what each script whose webhook was called decided.
type Object struct {
	File       string   `json:"file"`
	Document   int      `json:"document"`
	Item       int      `json:"item,omitempty"`
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace,omitempty"`
	Name       string   `json:"name"`
	Admitted   bool     `json:"admitted"`
	Results    []Result `json:"results"`
	seq        int      // the order of objects and problems as the input had them
}

// Result is one script's decision about an object, in the order the API server would call
// the webhooks: mutating ones first.
type Result struct {
	Script   string          `json:"script"`
	Webhook  string          `json:"webhook"` // "mutate" or "validate"
	Result   string          `json:"result"`  // Pass, Deny, Warn, Mutate, Audit or Error
	Code     int32           `json:"code,omitempty"`
	Message  string          `json:"message,omitempty"`
	Warnings []string        `json:"warnings,omitempty"`
	Patch    json.RawMessage `json:"patch,omitempty"` // a JSON Patch (RFC 6902)
}

// Problem is what kept a document or a script from being checked: input that is not a
// manifest, an unknown resource, a duplicate, a script that does not load.
type Problem struct {
	File     string `json:"file,omitempty"`
	Document int    `json:"document,omitempty"`
	Item     int    `json:"item,omitempty"`
	Script   string `json:"script,omitempty"`
	Message  string `json:"message"`
	seq      int    // see Object.seq; 0 for the scripts' problems, which come first
}

// Where names what the problem is about.
func (p Problem) Where() string {
	if p.Script != "" {
		return "script " + p.Script
	}
	if p.File == "" {
		return "check"
	}
	return Document{File: p.File, Index: p.Document, Item: p.Item}.Where()
}

// Where names the object and where it was read: "Deployment prod/web (apps.yaml, document 2)".
func (o Object) Where() string {
	name := o.Name
	if o.Namespace != "" {
		name = o.Namespace + "/" + name
	}
	return fmt.Sprintf("%s %s (%s)", o.Kind, name, Document{File: o.File, Index: o.Document, Item: o.Item}.Where())
}

// Summary counts a report's results.
type Summary struct {
	Objects  int `json:"objects"`
	Passed   int `json:"passed"`
	Denied   int `json:"denied"`
	Warned   int `json:"warned"`
	Mutated  int `json:"mutated"`
	Audited  int `json:"audited"`
	Errors   int `json:"errors"`
	Problems int `json:"problems"`
}

// Summary counts the results of every object, by kind, and the problems.
func (r *Report) Summary() Summary {
	s := Summary{Objects: len(r.Objects), Problems: len(r.Problems)}
	counts := map[string]*int{Pass: &s.Passed, Deny: &s.Denied, Warn: &s.Warned, Mutate: &s.Mutated, Audit: &s.Audited, Error: &s.Errors}
	for _, o := range r.Objects {
		for _, res := range o.Results {
			*counts[res.Result]++
		}
	}
	return s
}

// ExitCode is `runner check`'s: 2 on a problem or a script's error, 1 when a script denied
// in mode enforce, 0 otherwise.
func (r *Report) ExitCode() int {
	s := r.Summary()
	switch {
	case s.Problems > 0 || s.Errors > 0:
		return 2
	case s.Denied > 0 && r.Mode == ModeEnforce:
		return 1
	}
	return 0
}

// inOrder calls object and problem for the report's objects and problems in the input's
// order, the scripts' problems first.
func (r *Report) inOrder(object func(Object), problem func(Problem)) {
	problems := r.Problems
	for _, o := range r.Objects {
		for len(problems) > 0 && problems[0].seq < o.seq {
			problem(problems[0])
			problems = problems[1:]
		}
		object(o)
	}
	for _, p := range problems {
		problem(p)
	}
}
