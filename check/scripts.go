package check

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jsinformer/jsinformer/plugins"
	"github.com/jsinformer/jsinformer/scripting"
)

// admissionScripts are the plugins of dir that define validate or mutate, in name order, as
// the runner's folder watcher finds them (modules and test files left out); only those named
// in only, when it names any. A plugin that does not compile or evaluate is a problem,
// whatever it defines: it cannot be told apart, and the runner would refuse it too.
func admissionScripts(ctx context.Context, dir string, only []string) ([]plugins.Source, []Problem, error) {
	sources, err := plugins.Scan(ctx, dir, plugins.Options{Imports: scripting.Imports, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, nil, fmt.Errorf("find the scripts of %s: %w", dir, err)
	}
	sources, problems := selectScripts(dir, sources, only)
	var out []plugins.Source
	for _, src := range sources {
		admits, err := scripting.DefinesAdmission(dir, src.Name, src.Content)
		switch {
		case err != nil:
			problems = append(problems, Problem{Script: src.Name, Message: "not loaded: " + err.Error()})
		case admits:
			out = append(out, src)
		case len(only) > 0:
			problems = append(problems, Problem{Script: src.Name, Message: "defines neither validate nor mutate"})
		}
	}
	if len(out) == 0 && len(problems) == 0 {
		problems = append(problems, Problem{Message: fmt.Sprintf("no admission script in %s: no plugin there defines validate or mutate", dir)})
	}
	return out, problems, nil
}

// selectScripts are the sources named in only, or all of them when it names none; a name
// that is no plugin of dir is a problem.
func selectScripts(dir string, sources []plugins.Source, only []string) ([]plugins.Source, []Problem) {
	if len(only) == 0 {
		return sources, nil
	}
	var out []plugins.Source
	var problems []Problem
	for _, name := range only {
		name = filepath.ToSlash(filepath.Clean(name))
		i := slices.IndexFunc(sources, func(s plugins.Source) bool { return s.Name == name })
		if i < 0 {
			problems = append(problems, Problem{Script: name, Message: "no such plugin in " + dir})
			continue
		}
		if !slices.ContainsFunc(out, func(s plugins.Source) bool { return s.Name == name }) {
			out = append(out, sources[i])
		}
	}
	slices.SortFunc(out, func(a, b plugins.Source) int { return strings.Compare(a.Name, b.Name) })
	return out, problems
}
