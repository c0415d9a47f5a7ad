package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jsinformer/jsinformer/debugapi"
	"github.com/jsinformer/jsinformer/permissions"
	"github.com/jsinformer/jsinformer/scripting"
)

const rbacExample = `  # What the scripts need, as a ClusterRole (or Roles), bindings and a ServiceAccount
  runner rbac --scripts ./scripts --service-account ops/jsinformer | kubectl apply -f -

  # The flags you run the runner with count: -n, --gvr, --leader-elect, --sharded, --debug-addr
  runner rbac --scripts ./scripts -n web --gvr deploy --leader-elect

  # Does an RBAC file grant everything the scripts need (--strict: and nothing more)?
  runner rbac --scripts ./scripts --check deploy/rbac.yaml --strict`

type rbacOptions struct {
	scripts, serviceAccount, output, check string
	resources                              []string
	namespace, leaseName, leaseNamespace   string
	storeNamespace                         string
	debugAddr                              string
	command                                string // for the header
	leaderElect, sharded, strict, store    bool
}

func newRBACCommand() *cobra.Command {
	o := &rbacOptions{}
	cmd := &cobra.Command{
		Use:   "rbac --scripts DIR [--service-account NS/NAME] [-o yaml|json] [--check FILE [--strict]]",
		Short: "Print the RBAC the scripts need, or check an RBAC file against it",
		Long: `rbac computes what a scripts folder needs of the API server and prints it as a ServiceAccount,
a ClusterRole and its binding (Roles and RoleBindings per namespace for what is needed in one
namespace only, the Lease of --leader-elect in the runner's own), each rule commented with the
scripts that need it and why. The output is sorted: it diffs cleanly.

What a script needs is read from it without running its handlers and without a cluster:
list and watch on each watch; the verbs of each k8s call whose resource is known when the
script loads (literals, constants, helper parameters; the finalizer, status and Event
helpers; a server-side apply also needs create); and the 'permissions' the script declares
for calls whose resource is known at run time only. Such a call in a script that declares
nothing is printed as NOT COVERED, with its file and line. Custom resources resolve offline
when spelled group/version/resource or resource.group. See docs/permissions.md.

With --check FILE it prints nothing but the difference: every need no ClusterRole or Role of
FILE grants (FILE's Roles count for the runner's namespace and their own), and with --strict
also every verb a rule grants that nothing needs. Exit code 1 when there is a difference, 2
on a usage error or a script that does not load.`,
		Example:       rbacExample,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE:          func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	f := cmd.Flags()
	f.StringVar(&o.scripts, "scripts", "", "the scripts folder (required)")
	f.StringVar(&o.serviceAccount, "service-account", "jsinformer", "the runner's ServiceAccount, NAMESPACE/NAME or NAME (no namespace: for kustomize to fill in)")
	f.StringVarP(&o.output, "output", "o", "yaml", "yaml (commented) or json (a v1 List)")
	f.StringVar(&o.check, "check", "", "compare with the ClusterRoles and Roles of this RBAC file instead of printing")
	f.BoolVar(&o.strict, "strict", false, "with --check, also fail on what the file grants beyond the needs")
	f.StringArrayVar(&o.resources, "gvr", nil, "the runner's --gvr: watched by scripts that name no watch")
	f.StringVarP(&o.namespace, "namespace", "n", "", "the runner's -n: watches in this namespace only")
	f.BoolVar(&o.leaderElect, "leader-elect", false, "the runner's --leader-elect: its Lease")
	f.BoolVar(&o.sharded, "sharded", false, "the runner's --sharded: the replicas' Leases")
	f.StringVar(&o.leaseName, "leader-elect-resource-name", permissions.DefaultLeaseName, "the runner's --leader-elect-resource-name")
	f.StringVar(&o.leaseNamespace, "leader-elect-resource-namespace", "", "the runner's --leader-elect-resource-namespace (default: the runner's own)")
	f.BoolVar(&o.store, "store", false, "the runner's --store: ctx.store's ConfigMaps")
	f.StringVar(&o.storeNamespace, "store-namespace", "", "the runner's --store-namespace (default: the runner's own)")
	f.StringVar(&o.debugAddr, "debug-addr", "", "the runner's --debug-addr: off loopback it needs to create TokenReviews and SubjectAccessReviews")
	return cmd
}

func (o *rbacOptions) run(cmd *cobra.Command) error {
	id, err := o.identity()
	if err != nil {
		return usageError(err)
	}
	if o.scripts == "" {
		return usageError(errors.New("--scripts is required"))
	}
	if err := checkScriptsDir(o.scripts); err != nil {
		return usageError(err)
	}
	rep, err := permissions.Compute(cmd.Context(), o.computeOptions())
	if err != nil {
		return usageError(err)
	}
	if o.store {
		rep.Needs = append(rep.Needs, permissions.StoreNeeds(o.storeNamespace)...)
		permissions.Sort(rep.Needs)
	}
	if o.check != "" {
		return o.runCheck(cmd, rep)
	}
	o.command = commandLine(cmd)
	return o.print(cmd.OutOrStdout(), cmd.ErrOrStderr(), rep, id)
}

func (o *rbacOptions) identity() (permissions.Identity, error) {
	if o.output != "yaml" && o.output != "json" {
		return permissions.Identity{}, fmt.Errorf("-o must be yaml or json, got %q", o.output)
	}
	ns, name, ok := strings.Cut(o.serviceAccount, "/")
	if !ok {
		ns, name = "", o.serviceAccount
	}
	if name == "" || strings.Contains(name, "/") {
		return permissions.Identity{}, fmt.Errorf("--service-account must be NAMESPACE/NAME or NAME, got %q", o.serviceAccount)
	}
	return permissions.Identity{Namespace: ns, Name: name}, nil
}

func (o *rbacOptions) computeOptions() permissions.Options {
	opts := permissions.Options{Dir: o.scripts, Namespace: o.namespace, Runner: permissions.Runner{
		LeaderElect: o.leaderElect, Sharded: o.sharded, LeaseName: o.leaseName, LeaseNamespace: o.leaseNamespace,
		DebugAuth: o.debugAddr != "" && !debugapi.IsLoopback(o.debugAddr),
	}}
	for _, r := range o.resources {
		opts.Defaults = append(opts.Defaults, scripting.WatchSpec{Resource: r})
	}
	return opts
}

// print writes the objects; the calls it cannot cover are also said on stderr.
func (o *rbacOptions) print(out, errOut io.Writer, rep *permissions.Report, id permissions.Identity) error {
	for _, d := range rep.Dynamic {
		fmt.Fprintf(errOut, "warning: %s\n", d)
	}
	roles := permissions.Roles(rep.Needs)
	if o.output == "json" {
		return permissions.WriteJSON(out, roles, id)
	}
	return permissions.WriteYAML(out, roles, id, permissions.Header(o.command, rep))
}

// commandLine is the command as it could be typed again: the flags given, sorted, for a
// header that does not change with their order.
func commandLine(cmd *cobra.Command) string {
	parts := []string{"runner rbac"}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				parts = append(parts, "--"+f.Name+" "+v)
			}
			return
		}
		if f.Value.Type() == "bool" {
			parts = append(parts, "--"+f.Name)
			return
		}
		parts = append(parts, "--"+f.Name+" "+f.Value.String())
	})
	return strings.Join(parts, " ")
}

func (o *rbacOptions) runCheck(cmd *cobra.Command, rep *permissions.Report) error {
	data, err := os.ReadFile(o.check)
	if err != nil {
		return usageError(fmt.Errorf("read --check file: %w", err))
	}
	grants, err := permissions.ReadGrants(data)
	if err != nil {
		return usageError(fmt.Errorf("%s: %w", o.check, err))
	}
	out := cmd.OutOrStdout()
	missing := grants.Missing(rep.Needs)
	for _, n := range missing {
		fmt.Fprintf(out, "missing: %s needs %s (%s); grant it: %s\n", n.Script, n, n.Why, n.Rule())
	}
	var extra []string
	if o.strict {
		extra = grants.Extra(rep.Needs)
		for _, e := range extra {
			fmt.Fprintf(out, "extra: %s, which no script needs\n", e)
		}
	}
	for _, d := range rep.Dynamic {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", d)
	}
	if len(missing)+len(extra) > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%s: %d missing, %d extra", o.check, len(missing), len(extra))}
	}
	fmt.Fprintf(out, "%s grants what the scripts of %s need\n", o.check, o.scripts)
	return nil
}
