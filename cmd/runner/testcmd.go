package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/jsinformer/jsinformer/internal/memcluster"
	"github.com/jsinformer/jsinformer/jstest"
)

const testExample = `  # Run every *.test.js / *.test.ts file under the examples
  runner test examples/scripts

  # One file, results as JSON
  runner test --json scripts/labels.test.js`

// exitError ends the process with code without printing anything more: what there was to
// say has been said.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageError is a mistake on the command line: exit code 2.
func usageError(err error) error { return &exitError{code: 2, err: err} }

type testOptions struct {
	json, permissions bool
	timeout           time.Duration
}

func newTestCommand() *cobra.Command {
	o := &testOptions{}
	cmd := &cobra.Command{
		Use:   "test [PATH...]",
		Short: "Run the tests of plugins offline, against an in-memory cluster",
		Long: `test runs *.test.js and *.test.ts files (the paths given, or those found under the folders
given; default the current folder). Each test drives plugins through the runner's own engine
against an in-memory API server on a virtual clock: no cluster, no network. The in-memory
server behaves as kube-apiserver ` + memcluster.KubernetesVersion + ` (its built-in resources, write and watch
semantics). See docs/testing.md.

Every plugin of the test files' folders is loaded as the runner would load it: one that does
not (a syntax error, an invalid definition) is printed with its file and line and fails the
run, whether or not a test uses it.

Prints one line per test and a summary; exits 1 when a test fails, 2 when a file cannot be
run, a plugin of the folders does not load, or the command line is wrong.`,
		Example:       testExample,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE:          func(cmd *cobra.Command, args []string) error { return o.run(cmd, args) },
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	cmd.Flags().BoolVar(&o.json, "json", false, "print the results as one JSON document")
	cmd.Flags().DurationVar(&o.timeout, "timeout", time.Minute, "longest a test may run (real time)")
	cmd.Flags().BoolVar(&o.permissions, "permissions", false, "after the results, print the RBAC the plugins need: what their sources show (as runner rbac) and what the tests' k8s calls used (docs/permissions.md)")
	return cmd
}

func (o *testOptions) run(cmd *cobra.Command, paths []string) error {
	if o.timeout <= 0 {
		return usageError(errors.New("--timeout must be positive"))
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	files, err := jstest.Find(paths)
	if err != nil {
		return usageError(err)
	}
	if len(files) == 0 {
		return usageError(fmt.Errorf("no *.test.js or *.test.ts files in %v", paths))
	}
	if o.permissions && o.json {
		return usageError(errors.New("--permissions prints YAML: it cannot be combined with --json"))
	}
	used := &usedPermissions{}
	opts := jstest.Options{Timeout: o.timeout, Output: cmd.ErrOrStderr()}
	if o.permissions {
		opts.OnCall = used.add
	}
	results := jstest.CheckPlugins(cmd.Context(), files)
	for _, f := range files {
		results = append(results, jstest.RunFile(cmd.Context(), f, opts))
	}
	if o.json {
		if err := jstest.WriteJSON(cmd.OutOrStdout(), results); err != nil {
			return fmt.Errorf("write results: %w", err)
		}
	} else {
		jstest.WriteText(cmd.OutOrStdout(), results)
	}
	if o.permissions {
		if err := used.print(cmd, files); err != nil {
			return err
		}
	}
	switch s := jstest.Summarize(results); {
	case s.Errors > 0:
		return &exitError{code: 2, err: fmt.Errorf("%d test file(s) could not be run", s.Errors)}
	case s.NotLoaded > 0:
		return &exitError{code: 2, err: fmt.Errorf("%d plugin(s) of the test files' folders do not load", s.NotLoaded)}
	case s.Failed > 0:
		return &exitError{code: 1, err: fmt.Errorf("%d test(s) failed", s.Failed)}
	}
	return nil
}
