package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/internal/typegen"
	"github.com/jsinformer/jsinformer/jstest"
	"github.com/jsinformer/jsinformer/scripting"
)

const typesExample = `  # The globals, the definition object and ctx (and the globals of test files), for editors and tsc
  runner types -o ./scripts

  # ... and interfaces for Deployments and a custom resource, from the cluster's OpenAPI v3
  runner types -o ./scripts --gvr deploy --gvr widgets.example.com`

// Files `runner types` writes.
const (
	declarationsFile     = "jsinformer.d.ts"
	testDeclarationsFile = "jsinformer-test.d.ts"
	resourcesFile        = "resources.d.ts"
)

type typesOptions struct {
	kube      *genericclioptions.ConfigFlags
	resources []string
	dir       string
}

func newTypesCommand() *cobra.Command {
	o := &typesOptions{kube: genericclioptions.NewConfigFlags(true)}
	cmd := &cobra.Command{
		Use:   "types [-o DIR] [--gvr RESOURCE ...]",
		Short: "Write TypeScript declarations for scripts: the runner's API, and resources from the cluster",
		Long: `types writes two files into DIR: ` + declarationsFile + `, the globals scripts see (log, console,
util, k8s, defineScript), the definition object, ctx and ctx.cache; and
` + testDeclarationsFile + `, the globals of test files (test, describe, expect, harness, ...; see
docs/testing.md). With --gvr it also writes ` + resourcesFile + `: an interface for each named
resource, generated from the OpenAPI v3 schemas the cluster serves (custom resources
included), and every type they use. A resource's interface is named after its kind, whatever
else is generated (when several share a kind, the storage version keeps the plain name;
docs/scripts.md says how the others are named); nested objects are named by their path
(ApplicationSpecSource), free-form data is JsonValue. Scripts import them with
` + "`import type { Deployment } from \"./resources\"`" + `; the runner strips types without checking
them, tsc --noEmit checks them (see docs/scripts.md).

Without --gvr no cluster is contacted.`,
		Example:       typesExample,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE:          func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVarP(&o.dir, "output-dir", "o", ".", "folder to write the files into, created if missing (usually the scripts folder)")
	f.StringArrayVar(&o.resources, "gvr", nil, "resource to write an interface for, repeatable: apps/v1/deployments, deploy, widgets.example.com")
	o.kube.AddFlags(f)
	return cmd
}

// run writes every file or none: everything is generated first (an unreachable cluster or an
// unknown resource fails before anything is written), then the files are written beside
// their targets and renamed into place.
func (o *typesOptions) run(cmd *cobra.Command) error {
	files := []typesFile{
		{declarationsFile, scripting.Declarations()},
		{testDeclarationsFile, jstest.Declarations()},
	}
	if len(o.resources) > 0 {
		out, err := o.generate(cmd.Context())
		if err != nil {
			return err
		}
		files = append(files, typesFile{resourcesFile, out})
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return fmt.Errorf("create output folder: %w", err)
	}
	return writeAll(cmd, o.dir, files)
}

type typesFile struct {
	name    string
	content []byte
}

// writeAll writes files into dir: each to a temporary file first, renamed into place once
// all are written, so a failed write leaves the folder as it was.
func writeAll(cmd *cobra.Command, dir string, files []typesFile) error {
	temps := make([]string, 0, len(files))
	defer func() {
		for _, t := range temps {
			_ = os.Remove(t) // gone already once renamed
		}
	}()
	for _, f := range files {
		tmp, err := os.CreateTemp(dir, "."+f.name+".*")
		if err != nil {
			return fmt.Errorf("write types: %w", err)
		}
		temps = append(temps, tmp.Name())
		_, err = tmp.Write(f.content)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chmod(tmp.Name(), 0o644)
		}
		if err != nil {
			return fmt.Errorf("write types: %w", err)
		}
	}
	for i, f := range files {
		path := filepath.Join(dir, f.name)
		if err := os.Rename(temps[i], path); err != nil {
			return fmt.Errorf("write types: %w", err)
		}
		fmt.Fprintln(cmd.OutOrStdout(), "wrote", path)
	}
	return nil
}

// generate resolves the --gvr names as the runner does and generates their interfaces.
func (o *typesOptions) generate(ctx context.Context) ([]byte, error) {
	restConfig, err := o.kube.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(restConfig)
	if err != nil {
		return nil, fmt.Errorf("create discovery client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(restConfig)
	if err != nil {
		return nil, fmt.Errorf("create dynamic client: %w", err)
	}
	version, err := disc.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("connect to cluster %s: %w", restConfig.Host, err)
	}
	resolver := dynamicinformer.NewResolver(disc, newLogger(os.Stderr, "text", 0))
	var resources []typegen.Resource
	for _, name := range o.resources {
		r, err := resolver.Resolve(name)
		if err != nil {
			return nil, err
		}
		resources = append(resources, typegen.Resource{Group: r.GVR.Group, Version: r.GVR.Version,
			Resource: r.GVR.Resource, Kind: r.Kind, Namespaced: r.Namespaced})
	}
	markPreferred(ctx, disc, dyn, resources)
	mod, err := typegen.Generate(typegen.ClusterSource(disc.OpenAPIV3()), resources)
	if err != nil {
		return nil, err
	}
	header := fmt.Sprintf("Generated by `runner types --gvr %s` from the cluster's OpenAPI v3 schemas\n"+
		"(Kubernetes %s). Do not edit: run it again when the resources change.\n"+
		"In a script: import type { %s } from \"./resources\";",
		strings.Join(o.resources, " --gvr "), version.GitVersion, strings.Join(distinct(mod.Names), ", "))
	return mod.Bytes(header), nil
}

// distinct is names without repeats, in order (a resource given twice is imported once).
func distinct(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
