package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/store"
)

// runner store: ctx.store's data (package store) read and deleted straight from its
// ConfigMaps with the user's kubeconfig, so it needs no running runner and can do what the
// user's RBAC allows on ConfigMaps in the store's namespace, and nothing more.

const storeLong = `store shows and deletes the data of ctx.store (docs/store.md). The store is ConfigMaps in the
runner's --store-namespace; these commands read and change them directly with your kubeconfig
(no running runner needed), so they need what your user may do on ConfigMaps there: list for
list and show, update for delete KEY, delete for delete.

Values are shown only for keys the script marked readable (the definition's store.readable);
others show their size only, unless show is given --show-values. --show-values needs no other
right than show: whoever may list the ConfigMaps can read the values anyway (kubectl get
configmap -o yaml), so RBAC on ConfigMaps in the store's namespace is what guards them; the
flag keeps values off a screen or a log by default.

The store of a script that is removed from the scripts folder is kept for the runner's
--store-retention (default 168h) and then deleted by the runner; list shows since when it is
gone.`

const storeExample = `  # Every script's store: keys, bytes, last write, whether its script is gone
  runner store list --store-namespace ops

  # One script's keys (values of readable keys only), or a shared namespace's
  runner store show notify.js --store-namespace ops
  runner store show --shared team-a --store-namespace ops
  runner store show notify.js --prefix sent/ --show-values

  # Delete one key, or all the data of a script whose file is gone
  runner store delete notify.js sent/abc --store-namespace ops
  runner store delete old-script.js --store-namespace ops`

// storeCmdFlags are the flags every store subcommand shares.
type storeCmdFlags struct {
	kube      *genericclioptions.ConfigFlags
	namespace string // --store-namespace
	shared    string
	output    string
}

func newStoreCommand() *cobra.Command {
	f := &storeCmdFlags{kube: genericclioptions.NewConfigFlags(true)}
	cmd := &cobra.Command{
		Use:   "store list|show|delete",
		Short: "List, show and delete the scripts' ctx.store data",
		Long:  storeLong, Example: storeExample,
		Args: cobra.NoArgs, SilenceUsage: true, SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError(errors.New("name a subcommand: runner store list, show or delete"))
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	p := cmd.PersistentFlags()
	p.StringVar(&f.namespace, "store-namespace", "", "the runner's --store-namespace (default: -n, else the kubeconfig's namespace)")
	f.kube.AddFlags(p)
	cmd.AddCommand(newStoreListCommand(f), newStoreShowCommand(f), newStoreDeleteCommand(f))
	return cmd
}

// client connects with the kubeconfig and returns the store's namespace.
func (f *storeCmdFlags) client() (kubernetes.Interface, string, error) {
	cfg, err := f.kube.ToRESTConfig()
	if err != nil {
		return nil, "", fmt.Errorf("load kubeconfig: %w", err)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("create client: %w", err)
	}
	ns := f.namespace
	if ns == "" {
		if ns, _, err = f.kube.ToRawKubeConfigLoader().Namespace(); err != nil {
			return nil, "", fmt.Errorf("load kubeconfig: %w", err)
		}
	}
	return c, ns, nil
}

// owner resolves the store named by args[0] or --shared to its ID and a name to print.
func (f *storeCmdFlags) owner(args []string) (id, name string, err error) {
	switch {
	case f.shared != "" && len(args) > 0:
		return "", "", usageError(errors.New("name a script or --shared NAME, not both"))
	case f.shared != "":
		if err := store.ValidSharedName(f.shared); err != nil {
			return "", "", usageError(err)
		}
		return store.SharedID(f.shared), "shared namespace " + f.shared, nil
	case len(args) == 0 || args[0] == "":
		return "", "", usageError(errors.New("name a script (as runner store list shows it) or --shared NAME"))
	}
	return store.ScriptID(args[0]), "script " + args[0], nil
}

// explain makes a Forbidden answer say which right is missing.
func explain(err error, verb, ns string) error {
	if apierrors.IsForbidden(err) {
		return fmt.Errorf("%w (the store is ConfigMaps in namespace %s: your kubeconfig user needs %s on configmaps there)", err, ns, verb)
	}
	return err
}

func newStoreListCommand(f *storeCmdFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the stores: keys, bytes and last write of each script and shared namespace",
		Long: `list shows every store in the store's namespace: the script (or shared namespace) it belongs to,
its live keys and their bytes (keys plus values), its ConfigMaps, its last write, and, for a
script that is gone, since when (the runner deletes its data --store-retention after that).`,
		Args: cobra.NoArgs, SilenceUsage: true, SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, ns, err := f.client()
			if err != nil {
				return err
			}
			owners, err := store.Inventory(cmd.Context(), c.CoreV1(), ns, time.Now())
			if err != nil {
				return explain(err, "list", ns)
			}
			if f.output == "json" {
				return writeJSON(cmd.OutOrStdout(), owners)
			}
			printOwners(cmd.OutOrStdout(), ns, owners)
			return nil
		},
	}
	cmd.Flags().StringVarP(&f.output, "output", "o", "", "json for the list as JSON")
	return cmd
}

func printOwners(w io.Writer, ns string, owners []store.Owner) {
	if len(owners) == 0 {
		_, _ = fmt.Fprintf(w, "no store data in namespace %s\n", ns)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "KIND\tNAME\tKEYS\tBYTES\tCONFIGMAPS\tLAST WRITE\tGONE SINCE")
	for _, o := range owners {
		kind := "script"
		if o.Shared {
			kind = "shared"
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\n", kind, o.Name, o.Keys, o.Bytes, o.ConfigMaps, when(o.LastWrite), when(o.DeletedAt))
	}
	_ = tw.Flush()
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// storeKey is one key as show prints it with -o json.
type storeKey struct {
	Key      string          `json:"key"`
	Bytes    int             `json:"bytes"`
	Version  int64           `json:"version"`
	Expires  *time.Time      `json:"expires,omitempty"`
	Readable bool            `json:"readable"`
	Value    json.RawMessage `json:"value,omitempty"` // readable keys, or all with --show-values
}

func newStoreShowCommand(f *storeCmdFlags) *cobra.Command {
	var prefix string
	var showValues bool
	cmd := &cobra.Command{
		Use:   "show SCRIPT | --shared NAME",
		Short: "Show one store's keys: size, version, expiry, and the values of readable keys",
		Long: `show lists the live keys of one script's store (or a shared namespace's, --shared), sorted, with
each value's size, version and expiry. A value is printed only when the script marked its key
readable (store.readable), or with --show-values.`,
		Args: cobra.MaximumNArgs(1), SilenceUsage: true, SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			id, name, err := f.owner(args)
			if err != nil {
				return err
			}
			c, ns, err := f.client()
			if err != nil {
				return err
			}
			entries, err := store.Entries(cmd.Context(), c.CoreV1(), ns, id, time.Now())
			if err != nil {
				return explain(err, "list", ns)
			}
			var keys []storeKey
			for _, e := range entries {
				if len(e.Key) < len(prefix) || e.Key[:len(prefix)] != prefix {
					continue
				}
				k := storeKey{Key: e.Key, Bytes: len(e.Value), Version: e.Version, Readable: e.Readable}
				if !e.Expires.IsZero() {
					k.Expires = &e.Expires
				}
				if e.Readable || showValues {
					k.Value = e.Value
				}
				keys = append(keys, k)
			}
			if f.output == "json" {
				return writeJSON(cmd.OutOrStdout(), keys)
			}
			printKeys(cmd.OutOrStdout(), name, ns, keys)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.shared, "shared", "", "show the shared namespace NAME instead of a script's store")
	fl.StringVar(&prefix, "prefix", "", "only the keys starting with this")
	fl.BoolVar(&showValues, "show-values", false, "print every value, readable or not")
	fl.StringVarP(&f.output, "output", "o", "", "json for the keys as JSON")
	return cmd
}

func printKeys(w io.Writer, name, ns string, keys []storeKey) {
	if len(keys) == 0 {
		_, _ = fmt.Fprintf(w, "no keys in the store of %s in namespace %s\n", name, ns)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "KEY\tBYTES\tVERSION\tEXPIRES\tVALUE")
	for _, k := range keys {
		exp := "-"
		if k.Expires != nil {
			exp = when(*k.Expires)
		}
		value := "(not readable)"
		if k.Value != nil {
			value = string(k.Value)
			if len(value) > 200 {
				value = value[:200] + "…"
			}
		}
		_, _ = fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", k.Key, k.Bytes, k.Version, exp, value)
	}
	_ = tw.Flush()
}

func newStoreDeleteCommand(f *storeCmdFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "delete SCRIPT [KEY] | --shared NAME [KEY]",
		Short: "Delete one key of a store, or all of a store's data",
		Long: `delete with a KEY removes that key as a runner's write would (its ConfigMap's update carries the
resourceVersion read, so no concurrent write is lost); without one it deletes every ConfigMap
of the store. A running script's next write starts the store again from empty; delete a
script's store after removing the script, or let the runner's --store-retention do it.`,
		Args: cobra.MaximumNArgs(2), SilenceUsage: true, SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			var key string
			if f.shared != "" && len(args) > 0 {
				key, args = args[0], nil
			} else if len(args) == 2 {
				key, args = args[1], args[:1]
			}
			id, name, err := f.owner(args)
			if err != nil {
				return err
			}
			c, ns, err := f.client()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if key != "" {
				existed, err := store.DeleteKey(cmd.Context(), c.CoreV1(), ns, id, key)
				if err != nil {
					return explain(err, "list and update", ns)
				}
				if !existed {
					return fmt.Errorf("delete store key: %s has no key %q in namespace %s", name, key, ns)
				}
				_, _ = fmt.Fprintf(out, "deleted key %q of %s\n", key, name)
				return nil
			}
			n, err := store.DeleteAll(cmd.Context(), c.CoreV1(), ns, id)
			if err != nil {
				return explain(err, "list and delete", ns)
			}
			if n == 0 {
				return fmt.Errorf("delete store: %s has no store data in namespace %s (runner store list shows what there is)", name, ns)
			}
			_, _ = fmt.Fprintf(out, "deleted the store of %s (%d ConfigMaps)\n", name, n)
			return nil
		},
	}
	cmd.Flags().StringVar(&f.shared, "shared", "", "delete from the shared namespace NAME instead of a script's store")
	return cmd
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
