package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jsinformer/jsinformer/status"
)

// Discovery records let the debug subcommands find the runners on this machine: a runner
// with a debug listener writes one JSON file (status.RunnerInfo) named PID-PORT.json in the
// runtime directory, and removes it when it stops; runner list reads them, skipping (and
// removing) the records of processes that are gone. The directory is
// $JSINFORMER_RUNTIME_DIR, else $XDG_RUNTIME_DIR/jsinformer, else $TMPDIR/jsinformer-UID,
// made 0700: only the user's own runners are listed.

// runtimeDir is where the discovery records live.
func runtimeDir() string {
	if d := os.Getenv("JSINFORMER_RUNTIME_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "jsinformer")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("jsinformer-%d", os.Getuid()))
}

// runnerInfo describes this process serving the debug API on addr.
func runnerInfo(scripts, addr string) status.RunnerInfo {
	host, _ := os.Hostname()
	info := status.RunnerInfo{PID: os.Getpid(), Host: host, ScriptsDir: scripts, DebugAddr: addr, Started: time.Now().UTC().Truncate(time.Second)}
	if abs, err := filepath.Abs(scripts); err == nil {
		info.ScriptsDir = abs
	}
	if os.Getenv("KUBERNETES_SERVICE_HOST") != "" { // in a pod, the host name is the pod's
		info.Pod = podNamespace() + "/" + host
	}
	return info
}

// register writes info's discovery record; the returned func removes it. A record that
// cannot be written costs only the listing: a WARN, no error.
func register(info status.RunnerInfo, logger *slog.Logger) func() {
	dir := runtimeDir()
	_, port, _ := net.SplitHostPort(info.DebugAddr)
	path := filepath.Join(dir, fmt.Sprintf("%d-%s.json", info.PID, port))
	data, err := json.Marshal(info)
	if err == nil {
		if err = os.MkdirAll(dir, 0o700); err == nil {
			err = os.WriteFile(path, data, 0o600)
		}
	}
	if err != nil {
		logger.Warn("debug API: cannot write the discovery record runner list reads", "path", path, "error", err.Error())
		return func() {}
	}
	return func() { _ = os.Remove(path) }
}

// discover reads the records of the runners alive on this machine, sorted by address.
func discover() ([]status.RunnerInfo, error) {
	dir := runtimeDir()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the runners' discovery records: %w", err)
	}
	var out []status.RunnerInfo
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		var info status.RunnerInfo
		data, err := os.ReadFile(path)
		if err != nil || json.Unmarshal(data, &info) != nil {
			continue
		}
		if !alive(info.PID) {
			_ = os.Remove(path) // a runner killed before it could remove its record
			continue
		}
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b status.RunnerInfo) int { return strings.Compare(a.DebugAddr, b.DebugAddr) })
	return out, nil
}

// alive reports whether process pid exists (signal 0 checks without sending).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func newListCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the runners on this machine and their debug API addresses",
		Long: `list shows the runners running on this machine as this user, from the discovery record each
runner with a debug API writes (in $JSINFORMER_RUNTIME_DIR, else $XDG_RUNTIME_DIR/jsinformer, else
$TMPDIR/jsinformer-UID) and removes when it stops: pid, debug API address, scripts folder and
start time. A second runner on the default address falls back to a free port: pass the address
listed here with --debug-addr. runner status says which runner answered.`,
		Example: "  runner list\n  runner status --debug-addr $(runner list -o json | jq -r '.[0].debugAddr')",
		Args:    cobra.NoArgs, SilenceUsage: true, SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "" && output != "json" {
				return usageError(fmt.Errorf("-o/--output must be json or empty, not %q", output))
			}
			runners, err := discover()
			if err != nil {
				return err
			}
			if output == "json" {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(append([]status.RunnerInfo{}, runners...))
			}
			return printRunners(cmd.OutOrStdout(), runners)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: empty for a table, or json")
	return cmd
}

func printRunners(w io.Writer, runners []status.RunnerInfo) error {
	if len(runners) == 0 {
		_, err := fmt.Fprintln(w, "no runner with a debug API is running on this machine (as this user)")
		return err
	}
	t := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(t, "DEBUG ADDR\tPID\tSCRIPTS\tSTARTED")
	for _, r := range runners {
		_, _ = fmt.Fprintf(t, "%s\t%d\t%s\t%s\n", r.DebugAddr, r.PID, r.ScriptsDir, r.Started.Local().Format(time.DateTime))
	}
	return t.Flush()
}
