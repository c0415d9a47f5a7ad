package main

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/internal/debugtext"
	"github.com/jsinformer/jsinformer/status"
)

// The read-only debug subcommands: each calls one endpoint of a running runner's debug API
// (package debugapi) and prints a table, or the API's JSON with -o json.

// debugCommand builds a subcommand that shares debugFlags.
func debugCommand(use, short, long, example string, args cobra.PositionalArgs, output bool,
	run func(cmd *cobra.Command, client *debugClient, f *debugFlags, args []string) error) (*cobra.Command, *debugFlags) {
	f := &debugFlags{}
	cmd := &cobra.Command{
		Use: use, Short: short, Long: long, Example: example, Args: args,
		SilenceUsage: true, SilenceErrors: true,
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := f.check(); err != nil {
				return err
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			return run(cmd, c, f, a)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	f.add(cmd, output)
	return cmd, f
}

func newStatusCommand() *cobra.Command {
	cmd, _ := debugCommand("status", "Show a running runner's scripts, versions, informers and leader state",
		`status shows the scripts of a running runner: file, content hash, state, last reloads, watches,
informers, leader state and memory per script, and the admission webhook entries of the scripts
with validate or mutate (configuration, entry, rules, failurePolicy, mode), and the audit scripts with
their counts and their initial pass's progress. It reads the runner's debug API (--debug-addr).`,
		"  runner status\n  runner status -o json\n  runner status --debug-addr 127.0.0.1:9089",
		cobra.NoArgs, true, func(cmd *cobra.Command, client *debugClient, f *debugFlags, _ []string) error {
			var raw []byte
			var st status.Status
			if err := client.get(cmd.Context(), "/debug/status", nil, &st, &raw); err != nil {
				return err
			}
			if f.output == "json" {
				return printJSON(cmd.OutOrStdout(), raw)
			}
			debugtext.Status(cmd.OutOrStdout(), st)
			return nil
		})
	return cmd
}

func newQueueCommand() *cobra.Command {
	cmd, _ := debugCommand("queue [SCRIPT]", "Show scripts' event backlogs, calls in flight and reconcile keys",
		`queue shows, per script version: the events waiting for its handler worker, the call it runs now and
for how long, whether it is paused, and each reconcile key: why it was queued (which event of
which object, owner mapping, ctx.enqueue, requeueAfter, retry), when it was first queued, failed
attempts, next retry and last error.`,
		"  runner queue\n  runner queue reconcile-web.js -o json",
		cobra.MaximumNArgs(1), true, func(cmd *cobra.Command, client *debugClient, f *debugFlags, args []string) error {
			q := url.Values{}
			if len(args) == 1 {
				q.Set("script", args[0])
			}
			var raw []byte
			var v inspection.QueueView
			if err := client.get(cmd.Context(), "/debug/queue", q, &v, &raw); err != nil {
				return err
			}
			if f.output == "json" {
				return printJSON(cmd.OutOrStdout(), raw)
			}
			debugtext.Queue(cmd.OutOrStdout(), v)
			return nil
		})
	return cmd
}

func newCacheCommand() *cobra.Command {
	var index string
	cmd, _ := debugCommand("cache RESOURCE [NAMESPACE/NAME]", "Show the cached objects scripts see (ctx.cache)",
		`cache lists the objects of RESOURCE that each script's own cache (ctx.cache) holds, or shows one
object as each script sees it. --index SCRIPT:INDEX=VALUE lists the objects SCRIPT's index
function INDEX files under VALUE (ctx.cache.byIndex). Secret data is redacted.`,
		"  runner cache deploy\n  runner cache deploy web/api -o json\n  runner cache deploy --index images.js:byImage=nginx:1.27",
		cobra.RangeArgs(1, 2), true, func(cmd *cobra.Command, client *debugClient, f *debugFlags, args []string) error {
			q := url.Values{"resource": {args[0]}}
			if len(args) == 2 {
				q.Set("object", args[1])
			}
			if index != "" {
				script, rest, ok1 := strings.Cut(index, ":")
				name, value, ok2 := strings.Cut(rest, "=")
				if !ok1 || !ok2 || script == "" || name == "" {
					return usageError(fmt.Errorf("--index %q: want SCRIPT:INDEX=VALUE, e.g. images.js:byImage=nginx:1.27", index))
				}
				q.Set("script", script)
				q.Set("index", name)
				q.Set("value", value)
			}
			var raw []byte
			var v inspection.CacheView
			if err := client.get(cmd.Context(), "/debug/cache", q, &v, &raw); err != nil {
				return err
			}
			if f.output == "json" {
				return printJSON(cmd.OutOrStdout(), raw)
			}
			return debugtext.Cache(cmd.OutOrStdout(), v, len(args) == 2)
		})
	cmd.Flags().StringVar(&index, "index", "", "SCRIPT:INDEX=VALUE: the objects SCRIPT's index function INDEX files under VALUE")
	return cmd
}

func newIndexesCommand() *cobra.Command {
	cmd, _ := debugCommand("indexes RESOURCE NAMESPACE/NAME", "Show the values each script's index functions computed for an object",
		`indexes shows, for each script with index functions that watches RESOURCE, the values its functions
returned for one object: the reverse of ctx.cache.byIndex.`,
		"  runner indexes deploy web/api",
		cobra.ExactArgs(2), true, func(cmd *cobra.Command, client *debugClient, f *debugFlags, args []string) error {
			var raw []byte
			var v inspection.IndexesView
			if err := client.get(cmd.Context(), "/debug/indexes", url.Values{"resource": {args[0]}, "object": {args[1]}}, &v, &raw); err != nil {
				return err
			}
			if f.output == "json" {
				return printJSON(cmd.OutOrStdout(), raw)
			}
			debugtext.Indexes(cmd.OutOrStdout(), v)
			return nil
		})
	return cmd
}

func newExplainCommand() *cobra.Command {
	var events int
	cmd, _ := debugCommand("explain RESOURCE NAMESPACE/NAME", "Explain what happened to one object: delivered or why not, handler calls, logs, writes, audit results",
		`explain shows, for one object: whether each script is shown it, and if not why (namespace, label
selector, field selector, not watched, version still syncing, script paused); then its last
events (default 20), each with the handler called, its duration and result, its log lines, its
API writes (verb, resource, name, dry-run, status code), the reconcile keys it enqueued, and the
reconcile runs of its key with attempts, and the admission decisions made about it (who asked,
script, operation, outcome, message, warnings, patch, duration), and each audit script's result for
it (pass, fail, warn, error, skip), message and since when. Recording is bounded: see docs/debugging.md.
The object is read from the API server with the runner's identity, so only for a resource some
loaded script watches.`,
		"  runner explain deploy web/api\n  runner explain cm kube-system/coredns --events 5 -o json",
		cobra.ExactArgs(2), true, func(cmd *cobra.Command, client *debugClient, f *debugFlags, args []string) error {
			if events <= 0 {
				return usageError(fmt.Errorf("--events must be positive, not %d", events))
			}
			q := url.Values{"resource": {args[0]}, "object": {args[1]}, "events": {strconv.Itoa(events)}}
			var raw []byte
			var v inspection.Explanation
			if err := client.get(cmd.Context(), "/debug/explain", q, &v, &raw); err != nil {
				return err
			}
			if f.output == "json" {
				return printJSON(cmd.OutOrStdout(), raw)
			}
			debugtext.Explanation(cmd.OutOrStdout(), v)
			return nil
		})
	cmd.Flags().IntVar(&events, "events", inspection.DefaultExplainEvents, "how many of the object's last events to show")
	return cmd
}
