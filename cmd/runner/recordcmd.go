package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/jsinformer/jsinformer/recording"
)

const recordExample = `  # Record Deployments and ConfigMaps of namespace web until Ctrl-C
  runner record --gvr deploy --gvr cm -n web -o events.jsonl

  # Then, in a test: h.replay("events.jsonl") (see docs/testing.md)`

type recordOptions struct {
	kube          *genericclioptions.ConfigFlags
	resources     []string
	output        string
	labelSelector string
	fieldSelector string
	verbosity     int
}

func newRecordCommand() *cobra.Command {
	o := &recordOptions{kube: genericclioptions.NewConfigFlags(true)}
	cmd := &cobra.Command{
		Use:   "record --gvr RESOURCE... -o FILE",
		Short: "Record a cluster's events for replay in tests",
		Long: `record writes the initial list of the resources named, then every change, with the time it
was received, as JSON Lines, until stopped (Ctrl-C). Objects are recorded as scripts see them.
h.replay(file) in a test file feeds the recording to a plugin on the virtual clock.`,
		Example:       recordExample,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE:          func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	f := cmd.Flags()
	f.StringArrayVar(&o.resources, "gvr", nil, "resource to record, repeatable: apps/v1/deployments, deploy, widgets.example.com")
	f.StringVarP(&o.output, "output", "o", "", "file to write (- for standard output)")
	f.StringVarP(&o.labelSelector, "selector", "l", "", "label selector")
	f.StringVar(&o.fieldSelector, "field-selector", "", "field selector")
	f.IntVarP(&o.verbosity, "v", "v", 0, "log verbosity: 0 info, 1 debug")
	o.kube.AddFlags(f)
	return cmd
}

func (o *recordOptions) run(cmd *cobra.Command) error {
	if len(o.resources) == 0 || o.output == "" {
		return usageError(errors.New("--gvr and -o are required: runner record --gvr deploy -o events.jsonl"))
	}
	logger := newLogger(cmd.ErrOrStderr(), "text", o.verbosity)
	restConfig, err := o.kube.ToRESTConfig()
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	dyn, err := dynamic.NewForConfig(restConfig)
	if err != nil {
		return fmt.Errorf("create dynamic client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(restConfig)
	if err != nil {
		return fmt.Errorf("create discovery client: %w", err)
	}
	out, closeOut, err := o.open(cmd)
	if err != nil {
		return err
	}
	w := recording.NewWriter(out)
	namespace := ""
	if cmd.Flags().Changed("namespace") {
		namespace = *o.kube.Namespace
	}
	err = recording.Record(cmd.Context(), recording.Config{Client: dyn, Discovery: disc, Resources: o.resources,
		Namespace: namespace, LabelSelector: o.labelSelector, FieldSelector: o.fieldSelector, Out: w, Logger: logger})
	if ferr := w.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("write %s: %w", o.output, ferr)
	}
	if cerr := closeOut(); err == nil && cerr != nil {
		err = fmt.Errorf("close %s: %w", o.output, cerr)
	}
	return err
}

func (o *recordOptions) open(cmd *cobra.Command) (io.Writer, func() error, error) {
	if o.output == "-" {
		return cmd.OutOrStdout(), func() error { return nil }, nil
	}
	f, err := os.Create(o.output)
	if err != nil {
		return nil, nil, fmt.Errorf("create %s: %w", o.output, err)
	}
	return f, f.Close, nil
}
