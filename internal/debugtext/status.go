package debugtext

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jsinformer/jsinformer/status"
)

// Status prints status.Status as runner status shows it: a summary line, then scripts,
// their last loads, watches and informers.
func Status(w io.Writer, st status.Status) {
	ready := "yes"
	if !st.Ready {
		ready = "no: " + st.NotReady
	}
	leader := "leading (no leader election)"
	if st.Leader.Enabled {
		leader = fmt.Sprintf("leading=%v, lease %s held by %s (this runner: %s)", st.Leader.Leading, st.Leader.Lease, st.Leader.Holder, st.Leader.Identity)
	}
	if r := st.Runner; r != nil {
		_, _ = fmt.Fprintf(w, "Runner: %s\n", RunnerLine(*r))
	}
	if sv := st.Server; sv != nil {
		_, _ = fmt.Fprintf(w, "API server: %s\n", serverLine(*sv))
	}
	_, _ = fmt.Fprintf(w, "Ready: %s\nLeader: %s\n", ready, leader)
	if sh := st.Shard; sh != nil {
		_, _ = fmt.Fprintf(w, "Shard: %s of %d replicas %v, generation %d, valid=%v, moving=%v (lease %s)\n",
			sh.Identity, len(sh.Members), sh.Members, sh.Generation, sh.Valid, sh.Pending, sh.Lease)
		for _, p := range sh.Partitions {
			_, _ = fmt.Fprintf(w, "Shard caches: %s\n", p)
		}
		if len(sh.Cached) > 0 {
			_, _ = fmt.Fprintf(w, "Shard cached objects: %s\n", cachedLine(sh.Cached))
		}
	}
	_, _ = fmt.Fprintln(w)
	t := newTable(w)
	row(t, "SCRIPT", "STATE", "HASH", "VERSIONS", "OBJECTS", "QUEUED", "CALLS", "ERRORS")
	for _, s := range st.Scripts {
		var versions []string
		objects, queued := 0, 0
		for _, v := range s.Versions {
			versions = append(versions, shortHash(v.Hash)+":"+string(v.State))
			if v.State == status.VersionCurrent {
				objects, queued = v.Objects, v.Queued
			}
		}
		var calls, errs uint64
		for _, h := range s.Handlers {
			calls, errs = calls+h.Calls, errs+h.Errors
		}
		row(t, s.Name, s.State, shortHash(s.Hash), strings.Join(versions, ","), objects, queued, calls, errs)
	}
	_ = t.Flush()
	printLoads(w, st.Scripts)
	printWatches(w, st.Scripts)
	printNet(w, st.Scripts)
	printOutbox(w, st.Scripts)
	printWebhooks(w, st.Webhooks)
	printInformers(w, st.Informers)
	printPartitions(w, st.Informers)
	printPermissions(w, st.Permissions)
	printAudit(w, st.Audit)
}

// printAudit lists the audit scripts with their results and progress, and says when the
// reports are kept in memory only.
func printAudit(w io.Writer, a *status.AuditStatus) {
	if a == nil {
		return
	}
	_, _ = fmt.Fprintln(w, "\nAudit:")
	if a.ReportsMissing {
		_, _ = fmt.Fprintln(w, "WARNING: the cluster does not serve openreports.io/v1alpha1 reports and clusterreports: audit results are kept in memory only (kubectl apply -f deploy/crds/openreports.yaml)")
	}
	if len(a.Scripts) == 0 {
		return
	}
	t := newTable(w)
	row(t, "SCRIPT", "INITIAL PASS", "PASS", "FAIL", "WARN", "ERROR", "SKIP")
	for _, s := range a.Scripts {
		pass := "done"
		if s.InitialPass {
			pass = fmt.Sprintf("running (%d of %d audited)", s.Audited, s.Objects)
		}
		r := s.Results
		row(t, s.Script, pass, r["pass"], r["fail"], r["warn"], r["error"], r["skip"])
	}
	_ = t.Flush()
}

// printPermissions lists what the runner lacks, when it lacks anything.
func printPermissions(w io.Writer, perms []status.PermissionStatus) {
	if len(perms) == 0 {
		return
	}
	_, _ = fmt.Fprintln(w, "\nMissing permissions:")
	t := newTable(w)
	row(t, "SCRIPT", "VERB", "RESOURCE", "NAMESPACE", "WHY", "REFUSED", "GRANT")
	for _, p := range perms {
		refused := "-"
		if p.Refused > 0 {
			refused = fmt.Sprint(p.Refused)
		}
		row(t, p.Script, p.Verb, p.Resource, orAll(p.Namespace), p.Why, refused, p.Grant)
	}
	_ = t.Flush()
}

// printWebhooks lists the scripts' admission webhook entries, if any script serves admission.
func printWebhooks(w io.Writer, hooks []status.WebhookStatus) {
	if len(hooks) == 0 {
		return
	}
	_, _ = fmt.Fprintln(w, "\nAdmission webhooks:")
	t := newTable(w)
	row(t, "SCRIPT", "CONFIGURATION", "ENTRY", "RULES", "FAILURE POLICY", "MODE", "TIMEOUT")
	for _, h := range hooks {
		config := h.Configuration
		if config == "" {
			config = "(not registered)"
		}
		mode := h.Mode
		if h.Stopped {
			mode += " (stopped)"
		}
		entry := h.Name
		if len(h.SharedWith) > 0 {
			entry += " (shared with " + strings.Join(h.SharedWith, ", ") + ")"
		}
		row(t, h.Script, config, entry, strings.Join(h.Rules, "; "), h.FailurePolicy, mode, fmt.Sprintf("%ds", h.TimeoutSeconds))
	}
	_ = t.Flush()
}

// printNet lists the `net` declarations of the scripts' current versions, if any declares one.
func printNet(w io.Writer, scripts []status.ScriptStatus) {
	var rows [][2]string
	for _, s := range scripts {
		if v, ok := s.Current(); ok && len(v.Net) > 0 {
			rows = append(rows, [2]string{s.Name, strings.Join(v.Net, ",")})
		}
	}
	if len(rows) == 0 {
		return
	}
	_, _ = fmt.Fprintln(w, "\nNetwork (declared `net`, within --allow-net):")
	t := newTable(w)
	row(t, "SCRIPT", "NET")
	for _, r := range rows {
		row(t, r[0], r[1])
	}
	_ = t.Flush()
}

func printLoads(w io.Writer, scripts []status.ScriptStatus) {
	_, _ = fmt.Fprintln(w, "\nLast loads:")
	t := newTable(w)
	row(t, "SCRIPT", "WHEN", "HASH", "RESULT", "TOOK", "OBJECTS", "ERROR")
	for _, s := range scripts {
		for _, l := range s.Loads {
			took, errText := "-", "-"
			if l.TookSeconds > 0 {
				took = (time.Duration(l.TookSeconds * float64(time.Second))).Round(time.Millisecond).String()
			}
			if l.Error != nil {
				errText = oneLine(l.Error.Message, 100)
				if l.Error.File != "" {
					errText = fmt.Sprintf("%s:%d:%d: %s", l.Error.File, l.Error.Line, l.Error.Column, errText)
				}
			}
			row(t, s.Name, clock(l.At), shortHash(l.Hash), l.Result, took, l.Objects, errText)
		}
	}
	_ = t.Flush()
}

func printWatches(w io.Writer, scripts []status.ScriptStatus) {
	_, _ = fmt.Fprintln(w, "\nWatches:")
	t := newTable(w)
	row(t, "SCRIPT", "RESOURCE", "NAMESPACE", "LABEL SELECTOR", "FIELD SELECTOR")
	for _, s := range scripts {
		for _, wa := range s.Watches {
			row(t, s.Name, wa.Resource, orAll(wa.Namespace), orDash(wa.LabelSelector), orDash(wa.FieldSelector))
		}
	}
	_ = t.Flush()
}

func printInformers(w io.Writer, infs []status.InformerStatus) {
	_, _ = fmt.Fprintln(w, "\nInformers:")
	t := newTable(w)
	row(t, "RESOURCE", "NAMESPACE", "SELECTORS", "SYNCED", "HEALTHY", "LAST CONTACT", "OBJECTS", "RECEIVED", "SCRIPTS")
	for _, i := range infs {
		contact := "never"
		if i.LastContact != nil {
			contact = time.Since(*i.LastContact).Round(time.Second).String() + " ago"
		}
		healthy := yesNo(i.Healthy)
		if !i.Healthy && i.LastError != "" {
			healthy = "no: " + oneLine(i.LastError, 60)
		}
		sel := strings.TrimPrefix(strings.TrimPrefix(i.LabelSelector+" "+i.FieldSelector, " "), " ")
		scripts := append([]string(nil), i.Scripts...)
		sort.Strings(scripts)
		row(t, i.Resource, orAll(i.Namespace), orDash(sel), yesNo(i.Synced), healthy, contact, i.Objects, bytesText(i.BytesReceived), strings.Join(scripts, ","))
	}
	_ = t.Flush()
}

// printPartitions lists the partitioned informers (docs/sharding.md), if any: which slices
// each caches, who filters them and why, how many objects came and stayed, and the bytes
// received.
func printPartitions(w io.Writer, infs []status.InformerStatus) {
	var t *tabwriter.Writer
	for _, i := range infs {
		if i.Shard == nil {
			continue
		}
		if t == nil {
			_, _ = fmt.Fprintln(w, "\nPartitioned informers:")
			t = newTable(w)
			row(t, "RESOURCE", "NAMESPACE", "PARTITION", "FILTERED BY", "RECEIVED", "KEPT", "BYTES", "WHY")
		}
		row(t, i.Resource, orAll(i.Namespace), i.Shard.Partition, i.Shard.Mode, i.Shard.Received, i.Shard.Kept, bytesText(i.BytesReceived), oneLine(i.Shard.Reason, 100))
	}
	if t != nil {
		_ = t.Flush()
	}
}

// cachedLine is "a.js=120 b.js=7": each partitioned script's cached objects, by name.
func cachedLine(cached map[string]int) string {
	parts := make([]string, 0, len(cached))
	for script, n := range cached {
		parts = append(parts, fmt.Sprintf("%s=%d", script, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func orAll(ns string) string {
	if ns == "" {
		return "(all)"
	}
	return ns
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

// RunnerLine names the runner that answered: pid and host (or pod), scripts folder, address.
func RunnerLine(r status.RunnerInfo) string {
	where := fmt.Sprintf("pid %d on %s", r.PID, r.Host)
	if r.Pod != "" {
		where = "pod " + r.Pod
	}
	return fmt.Sprintf("%s, scripts %s, debug API %s, since %s", where, r.ScriptsDir, r.DebugAddr, r.Started.Local().Format("15:04:05"))
}

// serverLine is the API server's part of runner status: "v1.37.2 at https://..., supported
// (v1.34 to v1.37)".
func serverLine(sv status.ServerStatus) string {
	support := "supported"
	if sv.OlderThanSupported {
		support = "OLDER than the supported versions"
	}
	return fmt.Sprintf("%s at %s, %s (%s)", sv.Version, sv.Host, support, sv.Supported)
}

// bytesText is n in binary units, as the web page shows them: "512 B", "12 KiB", "3.4 MiB", "1.2 GiB".
func bytesText(n uint64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%d KiB", n>>10)
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}
