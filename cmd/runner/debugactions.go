package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/spf13/cobra"

	"github.com/jsinformer/jsinformer/debugapi"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/internal/debugtext"
)

func newTailCommand() *cobra.Command {
	var script, object, resource string
	cmd, _ := debugCommand("tail [--script SCRIPT] [--object NAMESPACE/NAME]", "Stream handler calls and admission decisions live, with their output and writes",
		`tail prints every handler call, reconcile run and admission decision of a running runner as it
happens, with its log lines, API writes and enqueued keys (a decision: who asked, the outcome,
message, warnings and patch), until interrupted. --script and --object (with --resource
when several resources share names) narrow it. -o json prints one JSON record per line.`,
		"  runner tail\n  runner tail --script label.js --object web/api\n  runner tail -o json | jq .",
		cobra.NoArgs, true, func(cmd *cobra.Command, client *debugClient, f *debugFlags, _ []string) error {
			q := url.Values{}
			for k, v := range map[string]string{"script": script, "object": object, "resource": resource} {
				if v != "" {
					q.Set(k, v)
				}
			}
			out := cmd.OutOrStdout()
			return client.stream(cmd.Context(), "/debug/tail", q, func(event, data string) error {
				if event == "missed" {
					_, err := fmt.Fprintf(cmd.ErrOrStderr(), "tail: fell behind; records missed so far: %s\n", data)
					return err
				}
				if f.output == "json" {
					_, err := fmt.Fprintln(out, data)
					return err
				}
				var rec inspection.TraceRecord
				if err := json.Unmarshal([]byte(data), &rec); err != nil {
					return fmt.Errorf("decode a tail record: %w", err)
				}
				debugtext.Record(out, rec, true)
				return nil
			})
		})
	cmd.Flags().StringVar(&script, "script", "", "only this script's calls")
	cmd.Flags().StringVar(&object, "object", "", "only calls about this object (NAMESPACE/NAME, or NAME when cluster-scoped)")
	cmd.Flags().StringVar(&resource, "resource", "", "only calls about this resource")
	return cmd
}

// actionCommand builds an action subcommand that posts body() and prints the result message.
func actionCommand(use, short, long, example string, args cobra.PositionalArgs, path string,
	body func(args []string) (any, error)) *cobra.Command {
	cmd, _ := debugCommand(use, short, long, example, args, true, func(cmd *cobra.Command, client *debugClient, f *debugFlags, args []string) error {
		req, err := body(args)
		if err != nil {
			return err
		}
		var raw []byte
		var res debugapi.ActionResult
		if err := client.post(cmd.Context(), path, req, &res, &raw); err != nil {
			return err
		}
		if f.output == "json" {
			return printJSON(cmd.OutOrStdout(), raw)
		}
		_, err = fmt.Fprintln(cmd.OutOrStdout(), res.Message)
		return err
	})
	return cmd
}

func newRetryCommand() *cobra.Command {
	return actionCommand("retry SCRIPT KEY", "Reconcile a key now, forgetting its backoff",
		"retry queues KEY of SCRIPT's reconcile at once, as if its backoff had run out.",
		"  runner retry reconcile-web.js web/api", cobra.ExactArgs(2), "/debug/actions/retry",
		func(a []string) (any, error) { return debugapi.RetryRequest{Script: a[0], Key: a[1]}, nil })
}

func newPauseCommand() *cobra.Command {
	return actionCommand("pause SCRIPT", "Hold a script's events and reconcile keys until resume",
		`pause holds SCRIPT's next event and reconcile key; events keep queueing (runner queue shows them)
and are handled in order after runner resume SCRIPT. A reload while paused stays paused.`,
		"  runner pause label.js", cobra.ExactArgs(1), "/debug/actions/pause",
		func(a []string) (any, error) { return debugapi.ScriptRequest{Script: a[0]}, nil })
}

func newResumeCommand() *cobra.Command {
	return actionCommand("resume SCRIPT", "Let a paused script go on", "resume lets SCRIPT handle the events and keys it held.",
		"  runner resume label.js", cobra.ExactArgs(1), "/debug/actions/resume",
		func(a []string) (any, error) { return debugapi.ScriptRequest{Script: a[0]}, nil })
}

func newLogLevelCommand() *cobra.Command {
	var d time.Duration
	cmd := actionCommand("log-level LEVEL --for DURATION", "Change a running runner's log level for a while",
		`log-level sets the runner's log level (debug, info, warn, error) for --for (default 10m, at most
24h); then the level it had comes back.`,
		"  runner log-level debug --for 10m", cobra.ExactArgs(1), "/debug/actions/log-level",
		func(a []string) (any, error) {
			if d <= 0 || d > debugapi.MaxLogLevelFor {
				return nil, usageError(fmt.Errorf("--for must be between 1s and %s, not %s", debugapi.MaxLogLevelFor, d))
			}
			return debugapi.LogLevelRequest{Level: a[0], For: d.String()}, nil
		})
	cmd.Flags().DurationVar(&d, "for", debugapi.DefaultLogLevelFor, "how long the level lasts")
	return cmd
}

func newReplayCommand() *cobra.Command {
	var dryRun bool
	cmd, _ := debugCommand("replay SCRIPT RESOURCE NAMESPACE/NAME [--dry-run]", "Call a script's handler again with the cached object",
		`replay calls SCRIPT's onAdd (or onUpdate(obj, obj) when it has no onAdd) again with the object its
cache holds, after the events already queued, and prints what the call did. With --dry-run its
writes go with dryRun=All: the server validates them, nothing is stored.`,
		"  runner replay label.js deploy web/api --dry-run", cobra.ExactArgs(3), true,
		func(cmd *cobra.Command, client *debugClient, f *debugFlags, a []string) error {
			var raw []byte
			var rec inspection.TraceRecord
			req := debugapi.ReplayRequest{Script: a[0], Resource: a[1], Object: a[2], DryRun: dryRun}
			if err := client.post(cmd.Context(), "/debug/actions/replay", req, &rec, &raw); err != nil {
				return err
			}
			if f.output == "json" {
				return printJSON(cmd.OutOrStdout(), raw)
			}
			debugtext.Record(cmd.OutOrStdout(), rec, true)
			return nil
		})
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "send the handler's writes with dryRun=All")
	return cmd
}
