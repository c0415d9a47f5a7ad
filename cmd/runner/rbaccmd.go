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

  # The flags you run the runner with count: -n, --gvr, --leader-elect, --sharded, --shard-cache, --debug-addr,
  # --webhook-url, --webhook-service, --webhook-name, --webhook-cert-dir, --dry-run
  runner rbac --scripts ./scripts -n web --gvr deploy --leader-elect
  runner rbac --scripts ./scripts --service-account ops/jsinformer --webhook-service ops/jsinformer-webhook

  # Does an RBAC file grant everything the scripts need (--strict: and nothing more)?
  runner rbac --scripts ./scripts --check deploy/rbac.yaml --strict`

type rbacOptions struct {
	scripts, serviceAccount, output, check string
	resources                              []string
	namespace, leaseName, leaseNamespace   string
	storeNamespace                         string
	debugAddr                              string
	command                                string // for the header
	leaderElect, sharded, strict, dryRun   bool
	shardCache                             bool
	store                                  bool
	webhook                                webhookFlags
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

A script with validate or mutate needs what serving admission takes, as the runner's
--webhook-* flags say: its two webhook configurations by name when it registers them, and
its certificate Secret by name unless --webhook-cert-dir is given. A script whose only
handlers are validate and mutate, and that never reads ctx.cache, needs no list or watch.
The --allow-net entries the scripts' 'net' declarations name are printed as a comment.

With --check FILE it prints nothing but the difference: every need no ClusterRole or Role of
FILE grants, as applying FILE leaves them (an object replaces an earlier one of the same kind,
namespace and name; a Role without a namespace is in the runner's), and with --strict
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
	f.BoolVar(&o.shardCache, "shard-cache", false, "the runner's --shard-cache (with --sharded): the namespaces, listed to plan each replica's share")
	f.StringVar(&o.leaseName, "leader-elect-resource-name", permissions.DefaultLeaseName, "the runner's --leader-elect-resource-name")
	f.StringVar(&o.leaseNamespace, "leader-elect-resource-namespace", "", "the runner's --leader-elect-resource-namespace (default: the runner's own)")
	f.BoolVar(&o.store, "store", false, "the runner's --store: ctx.store's ConfigMaps")
	f.StringVar(&o.storeNamespace, "store-namespace", "", "the runner's --store-namespace (default: the runner's own)")
	f.StringVar(&o.debugAddr, "debug-addr", "", "the runner's --debug-addr: off loopback it needs to create TokenReviews and SubjectAccessReviews")
	o.webhook.addForRBAC(f, &o.dryRun)
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
	if err := o.checkWebhookFlags(id); err != nil {
		return usageError(err)
	}
	rep, err := permissions.Compute(cmd.Context(), o.computeOptions(id))
	if err != nil {
		return usageError(err)
	}
	if o.store {
		rep.Needs = append(rep.Needs, permissions.StoreNeeds(o.storeNamespace)...)
		permissions.Sort(rep.Needs)
	}
	if o.check != "" {
		return o.runCheck(cmd, rep, id.Namespace)
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

// checkWebhookFlags refuses what the runner would refuse, and a default webhook name that
// cannot be told: it is made from the runner's namespace.
func (o *rbacOptions) checkWebhookFlags(id permissions.Identity) error {
	if err := o.webhook.validate(); err != nil {
		return err
	}
	if o.webhook.serves() && o.webhook.name == "" && id.Namespace == "" {
		return errors.New("--webhook-name is required when --service-account names no namespace: the runner's default is jsinformer-<its namespace>")
	}
	return nil
}

func (o *rbacOptions) computeOptions(id permissions.Identity) permissions.Options {
	opts := permissions.Options{Dir: o.scripts, Namespace: o.namespace, Admission: o.webhook.admission(o.dryRun, id.Namespace, ""), Runner: permissions.Runner{
		LeaderElect: o.leaderElect, Sharded: o.sharded, ShardCache: o.shardCache, LeaseName: o.leaseName, LeaseNamespace: o.leaseNamespace,
		DebugAuth: o.debugAddr != "" && !debugapi.IsLoopback(o.debugAddr),
	}}
	for _, r := range o.resources {
		opts.Defaults = append(opts.Defaults, scripting.WatchSpec{Resource: r})
	}
	return opts
}

// print writes the objects; the calls it cannot cover, and admission scripts the flags serve
// no admission for, are also said on stderr, and so is --allow-net for JSON (no comments).
func (o *rbacOptions) print(out, errOut io.Writer, rep *permissions.Report, id permissions.Identity) error {
	o.warn(errOut, rep)
	roles := permissions.Roles(rep.Needs)
	warnKustomizeNamespace(errOut, roles, id)
	if o.output == "json" {
		if allow := rep.AllowNet(); len(allow) > 0 {
			fmt.Fprintf(errOut, "note: the scripts' net declarations need --allow-net %s\n", strings.Join(allow, ","))
		}
		return permissions.WriteJSON(out, roles, id)
	}
	return permissions.WriteYAML(out, roles, id, permissions.Header(o.command, rep))
}

// warn says on stderr what the printed rules cannot cover.
func (o *rbacOptions) warn(errOut io.Writer, rep *permissions.Report) {
	for _, d := range rep.Dynamic {
		fmt.Fprintf(errOut, "warning: %s\n", d)
	}
	if len(rep.Admission) > 0 && !o.webhook.serves() {
		fmt.Fprintf(errOut, "warning: %s define validate or mutate, but without --webhook-url, --webhook-service or --webhook-cert-dir the runner serves no admission: nothing is granted for it\n",
			strings.Join(rep.Admission, ", "))
	}
}

// warnKustomizeNamespace says, when the namespace is left to kustomize and some Role names
// another, that kustomize's plain `namespace:` would move that Role into its own (an ID
// conflict beside the runner's Role, or a grant in the wrong namespace), and what keeps it.
func warnKustomizeNamespace(errOut io.Writer, roles []permissions.Role, id permissions.Identity) {
	if id.Namespace != "" {
		return
	}
	var named []string
	for _, r := range roles {
		if !r.Cluster && !r.Own {
			named = append(named, r.Namespace)
		}
	}
	if len(named) > 0 {
		fmt.Fprintf(errOut, "warning: the Roles for namespaces %s name their namespace, and --service-account names none: "+
			"kustomize's `namespace:` would move them into its own; use its NamespaceTransformer with unsetOnly: true "+
			"(docs/permissions.md), or give --service-account NAMESPACE/NAME\n", strings.Join(named, ", "))
	}
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

// runCheck compares rep with the --check file, applied in namespace own ("" not known).
func (o *rbacOptions) runCheck(cmd *cobra.Command, rep *permissions.Report, own string) error {
	data, err := os.ReadFile(o.check)
	if err != nil {
		return usageError(fmt.Errorf("read --check file: %w", err))
	}
	grants, err := permissions.ReadGrants(data, own)
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
	o.warn(cmd.ErrOrStderr(), rep)
	if len(missing)+len(extra) > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%s: %d missing, %d extra", o.check, len(missing), len(extra))}
	}
	fmt.Fprintf(out, "%s grants what the scripts of %s need\n", o.check, o.scripts)
	return nil
}
