package main

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/jsinformer/jsinformer/check"
	"github.com/jsinformer/jsinformer/internal/memcluster"
)

const checkExample = `  # The manifests of a folder (recursively) against the policies of another
  runner check --scripts policies manifests/

  # What kustomize renders, as a CI step failing on a denial
  kustomize build overlays/prod | runner check --scripts policies -

  # JUnit XML for the CI's test report; denials only reported, not failing the build
  runner check --scripts policies -o junit --mode warn manifests/ > check.xml`

type checkOptions struct {
	scripts, output, mode string
	resources, only       []string
}

func newCheckCommand() *cobra.Command {
	o := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check --scripts DIR FILE_OR_DIR...",
		Short: "Run the scripts' validate and mutate over manifests, offline, as the API server would for a CREATE",
		Long: `check runs the validate and mutate of the admission scripts in --scripts over manifests, as
kube-apiserver would call their webhooks to create each one, before anything reaches a
cluster. The manifests are YAML or JSON files with one or more documents, folders (read
recursively: *.yaml, *.yml, *.json) or - for stdin; they are created in the order given in the
in-memory cluster of 'runner test' (behaving as kube-apiserver ` + memcluster.KubernetesVersion + `), so a script
reading its cache or indexes sees the manifests admitted before. No cluster, no network.

Prints each denial, warning, patch and audit with the object, its file and document, and the
script's message. Exits 1 when a script denies, 2 on an input or script error (invalid YAML,
a document without apiVersion or kind, an unknown resource, a script that does not load), 0
otherwise. --mode warn reports denials as warnings and exits 0 on them; --mode audit lists
every result, passes included, and exits 0 on denials too. See docs/check.md.`,
		Example:       checkExample,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE:          func(cmd *cobra.Command, args []string) error { return o.run(cmd, args) },
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	f := cmd.Flags()
	f.StringVar(&o.scripts, "scripts", "", "folder of plugin scripts whose validate and mutate judge the manifests (required)")
	f.StringVarP(&o.output, "output", "o", "text", "output format: text, json or junit")
	f.StringVar(&o.mode, "mode", string(check.ModeEnforce), "enforce (a denial fails: exit 1), warn (denials reported as warnings) or audit (every result listed, passes included; denials do not fail)")
	f.StringArrayVar(&o.only, "only", nil, "run only this admission script of --scripts (a path relative to it), repeatable; default every plugin there that defines validate or mutate")
	f.StringArrayVar(&o.resources, "gvr", nil, "resource of scripts that name no watch of their own, repeatable (as the runner's --gvr)")
	return cmd
}

// writers are the output formats.
var checkWriters = map[string]func(io.Writer, *check.Report) error{
	"text": check.WriteText, "json": check.WriteJSON, "junit": check.WriteJUnit,
}

func (o *checkOptions) validate(args []string) error {
	switch {
	case o.scripts == "":
		return errors.New("flag --scripts is required: runner check --scripts DIR FILE_OR_DIR")
	case len(args) == 0:
		return errors.New("no manifests: give files, folders or - for stdin")
	case checkWriters[o.output] == nil:
		return fmt.Errorf("-o/--output must be text, json or junit, not %q", o.output)
	case !slices.Contains(check.Modes, check.Mode(o.mode)):
		return fmt.Errorf("--mode must be enforce, warn or audit, not %q", o.mode)
	}
	return nil
}

func (o *checkOptions) run(cmd *cobra.Command, args []string) error {
	if err := o.validate(args); err != nil {
		return usageError(err)
	}
	if err := checkScriptsDir(o.scripts); err != nil {
		return usageError(err)
	}
	docs, err := check.Read(args, cmd.InOrStdin())
	if err != nil {
		return usageError(err)
	}
	report, err := check.Run(cmd.Context(), docs, check.Options{ScriptsDir: o.scripts, Resources: o.resources, Only: o.only, Mode: check.Mode(o.mode)})
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if err := checkWriters[o.output](cmd.OutOrStdout(), report); err != nil {
		return &exitError{code: 2, err: fmt.Errorf("write the report: %w", err)}
	}
	return checkExit(report)
}

// checkExit is the report's exit code as the command's error.
func checkExit(r *check.Report) error {
	s := r.Summary()
	switch code := r.ExitCode(); code {
	case 2:
		return &exitError{code: 2, err: fmt.Errorf("check failed: %d problem(s), %d script error(s) (listed above)", s.Problems, s.Errors)}
	case 1:
		return &exitError{code: 1, err: fmt.Errorf("%d denied", s.Denied)}
	}
	return nil
}
