package main

import (
	"fmt"
	"regexp"
	"strings"
)

// phase is one step of the plan.
type phase struct {
	name    string
	deps    []string
	command string
}

var phaseName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// parsePlan reads NAME[:DEP,DEP...]=COMMAND arguments. Names are unique and a dependency must
// name an earlier phase, which keeps the plan acyclic.
func parsePlan(args []string) ([]phase, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("parse plan: no phases given")
	}
	seen := map[string]bool{}
	plan := make([]phase, 0, len(args))
	for _, arg := range args {
		head, command, ok := strings.Cut(arg, "=")
		if !ok || strings.TrimSpace(command) == "" {
			return nil, fmt.Errorf("parse phase %q: want NAME[:DEP,...]=COMMAND", arg)
		}
		name, depList, _ := strings.Cut(head, ":")
		if !phaseName.MatchString(name) {
			return nil, fmt.Errorf("parse phase %q: name %q is not lowercase letters, digits, '.', '_' or '-'", arg, name)
		}
		if seen[name] {
			return nil, fmt.Errorf("parse phase %q: %q is defined twice", arg, name)
		}
		p := phase{name: name, command: command}
		if depList != "" {
			for _, dep := range strings.Split(depList, ",") {
				if !seen[dep] {
					return nil, fmt.Errorf("parse phase %q: dependency %q is not a phase listed before it", arg, dep)
				}
				p.deps = append(p.deps, dep)
			}
		}
		seen[name] = true
		plan = append(plan, p)
	}
	return plan, nil
}
