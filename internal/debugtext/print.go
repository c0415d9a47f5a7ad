package debugtext

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/jsinformer/jsinformer/inspection"
)

// Tables in kubectl's style: upper-case headers, columns three spaces apart, "<none>" for
// nothing.

func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 8, 3, ' ', 0) }

func row(t *tabwriter.Writer, cells ...any) {
	parts := make([]string, len(cells))
	for i, c := range cells {
		s := fmt.Sprint(c)
		if s == "" {
			s = "<none>"
		}
		parts[i] = s
	}
	_, _ = fmt.Fprintln(t, strings.Join(parts, "\t"))
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func ms(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%.2fs", v/1000)
	case v >= 1:
		return fmt.Sprintf("%.1fms", v)
	}
	return fmt.Sprintf("%.0fµs", v*1000)
}

func clock(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Local().Format("15:04:05.000")
}

// Queue prints `runner queue`: reconcile keys, calls in flight and backlogs.
func Queue(w io.Writer, v inspection.QueueView) {
	t := newTable(w)
	row(t, "SCRIPT", "VERSION", "STATE", "PAUSED", "BACKLOG", "IN FLIGHT", "KEYS")
	for _, s := range v.Scripts {
		inflight := "-"
		if c := s.InFlight; c != nil {
			inflight = fmt.Sprintf("%s %s for %s", c.Handler, c.Object, ms(c.ElapsedMs))
		}
		keys := "-"
		if s.Reconcile {
			keys = fmt.Sprint(len(s.Keys))
		}
		row(t, s.Script, s.Version, s.State, yesNo(s.Paused), s.Backlog, inflight, keys)
	}
	_ = t.Flush()
	queueKeys(w, v)
	droppedKeys(w, v)
}

// droppedKeys prints the keys given up on after maxRetries, if any.
func droppedKeys(w io.Writer, v inspection.QueueView) {
	var has bool
	for _, s := range v.Scripts {
		has = has || len(s.Dropped) > 0
	}
	if !has {
		return
	}
	_, _ = fmt.Fprintln(w, "\nDropped after maxRetries (newest first):")
	t := newTable(w)
	row(t, "SCRIPT", "KEY", "DROPPED", "ATTEMPTS", "LAST ERROR")
	for _, s := range v.Scripts {
		for _, d := range s.Dropped {
			row(t, s.Script, d.Key, clock(d.Dropped), d.Attempts, oneLine(d.LastError, 80))
		}
	}
	_ = t.Flush()
}

// queueKeys prints the reconcile keys queued, waiting or running, if any.
func queueKeys(w io.Writer, v inspection.QueueView) {
	var hasKeys bool
	for _, s := range v.Scripts {
		hasKeys = hasKeys || len(s.Keys) > 0
	}
	if !hasKeys {
		return
	}
	_, _ = fmt.Fprintln(w)
	t := newTable(w)
	row(t, "SCRIPT", "KEY", "REASON", "FIRST QUEUED", "ATTEMPTS", "NEXT RETRY", "RUNNING", "LAST ERROR")
	for _, s := range v.Scripts {
		for _, k := range s.Keys {
			next, running := "-", "-"
			if k.NextRetry != nil {
				next = "in " + time.Until(*k.NextRetry).Round(time.Millisecond).String()
			}
			if k.Running {
				running = ms(k.RunningForMs)
			}
			row(t, s.Script, k.Key, k.Reason, clock(k.FirstQueued), k.Attempts, next, running, oneLine(k.LastError, 80))
		}
	}
	_ = t.Flush()
}

// Cache prints `runner cache`: the cached objects a script sees, or one object.
func Cache(w io.Writer, v inspection.CacheView, one bool) error {
	if one {
		for _, o := range v.Objects {
			_, _ = fmt.Fprintf(w, "# %s (version %s): %s %s\n", o.Script, o.Version, v.Resource, o.Key)
			data, err := yaml.Marshal(o.Object)
			if err != nil {
				return fmt.Errorf("print object: %w", err)
			}
			_, _ = w.Write(data)
		}
		return nil
	}
	t := newTable(w)
	row(t, "SCRIPT", "VERSION", "OBJECT", "RESOURCEVERSION")
	for _, o := range v.Objects {
		row(t, o.Script, o.Version, o.Key, o.ResourceVersion)
	}
	if len(v.Objects) == 0 {
		_, _ = fmt.Fprintf(w, "No objects of %s in any script's cache.\n", v.Resource)
	}
	return t.Flush()
}

// Indexes prints `runner indexes`: the values each script's indexers compute for one object.
func Indexes(w io.Writer, v inspection.IndexesView) {
	t := newTable(w)
	row(t, "SCRIPT", "VERSION", "INDEX", "VALUES")
	for _, s := range v.Scripts {
		names := make([]string, 0, len(s.Values))
		for n := range s.Values {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			vals := strings.Join(s.Values[n], ", ")
			if !s.Cached {
				vals = "(not in this script's cache)"
			}
			row(t, s.Script, s.Version, n, vals)
		}
	}
	_ = t.Flush()
}

// Explanation prints `runner explain`: delivery per script and the object's last events.
func Explanation(w io.Writer, x inspection.Explanation) {
	state := "not on the server"
	if x.Exists {
		state = "exists, resourceVersion " + resourceVersion(x.Current)
	}
	_, _ = fmt.Fprintf(w, "%s %s: %s\n", x.Resource, x.Object, state)
	if x.Owner != "" {
		_, _ = fmt.Fprintf(w, "Shard owner: %s (this runner: %s)\n", x.Owner, x.Self)
	}
	_, _ = fmt.Fprintln(w)
	t := newTable(w)
	row(t, "SCRIPT", "VERSION", "STATE", "DELIVERED", "CACHED", "REASON", "DETAIL")
	for _, d := range x.Deliveries {
		reason := d.Reason
		if d.Delivered {
			reason = "-"
		}
		detail := d.Detail
		if detail == "" {
			detail = "-"
		}
		row(t, d.Script, d.Version, d.State, yesNo(d.Delivered), yesNo(d.Cached), reason, detail)
	}
	_ = t.Flush()
	auditResults(w, x.Audit)
	_, _ = fmt.Fprintln(w)
	switch {
	case !x.Recording:
		_, _ = fmt.Fprintln(w, "Events: not recorded (--trace-records 0).")
		return
	case len(x.Records) == 0:
		_, _ = fmt.Fprintln(w, "Events: none recorded for this object.")
		return
	}
	header := fmt.Sprintf("Events (last %d, oldest first", len(x.Records))
	if x.Dropped {
		header += "; older ones dropped"
	}
	_, _ = fmt.Fprintln(w, header+"):")
	for _, r := range x.Records {
		Record(w, r, false)
	}
}

// auditResults prints the object's audit results, if any script audits it.
func auditResults(w io.Writer, results []inspection.AuditResult) {
	if len(results) == 0 {
		return
	}
	_, _ = fmt.Fprintln(w, "\nAudit:")
	t := newTable(w)
	row(t, "SCRIPT", "RESULT", "SINCE", "MESSAGE")
	for _, r := range results {
		row(t, r.Script, r.Result, r.Time.Local().Format(time.DateTime), orDash(oneLine(r.Message, 200)))
	}
	_ = t.Flush()
}

// Record prints one trace record: a line, then its logs, writes, keys and error indented.
func Record(w io.Writer, r inspection.TraceRecord, withObject bool) {
	if r.Admission != nil {
		admissionRecord(w, r, withObject)
		return
	}
	handler := r.Handler
	if handler == "" {
		handler = "-"
	}
	what := r.Event
	if r.Initial {
		what += " (initial list)"
	}
	if r.Attempt > 0 {
		what += fmt.Sprintf(" (attempt %d)", r.Attempt)
	}
	obj := ""
	if withObject {
		obj = "  " + r.Resource + " " + r.Object
	}
	_, _ = fmt.Fprintf(w, "%s  %s  %s%s  %s  %s  %s  rv=%s\n", clock(r.Time), r.Script, what, obj, handler, r.Result, ms(r.DurationMs), r.ResourceVersion)
	for _, l := range r.Logs {
		attrs := ""
		if len(l.Attrs) > 0 {
			attrs = " " + fmt.Sprint(l.Attrs)
		}
		_, _ = fmt.Fprintf(w, "    log    %-5s %s%s\n", l.Level, l.Message, attrs)
	}
	for _, wr := range r.Writes {
		dry := ""
		if wr.DryRun {
			dry = " (dry-run)"
		}
		target := strings.TrimPrefix(wr.Namespace+"/"+wr.Name, "/")
		line := fmt.Sprintf("    write  %s %s %s -> %d%s", wr.Verb, wr.Resource, target, wr.Code, dry)
		if wr.Error != "" {
			line += ": " + oneLine(wr.Error, 120)
		}
		_, _ = fmt.Fprintln(w, line)
	}
	for _, rq := range r.Requests {
		line := fmt.Sprintf("    fetch  %s %s%s -> %d  %s  %dB", rq.Method, rq.Host, rq.Path, rq.Status, ms(rq.DurationMs), rq.Bytes)
		if rq.Error != "" {
			line += "  " + rq.Error
		}
		_, _ = fmt.Fprintln(w, line)
	}
	for _, op := range r.Store {
		_, _ = fmt.Fprintln(w, "    store  "+storeLine(op))
	}
	if len(r.Enqueued) > 0 {
		_, _ = fmt.Fprintf(w, "    enqueued %s\n", strings.Join(r.Enqueued, ", "))
	}
	if r.Error != "" {
		_, _ = fmt.Fprintf(w, "    error  %s\n", oneLine(r.Error, 300))
	}
	if r.Truncated > 0 {
		_, _ = fmt.Fprintf(w, "    (%d more log lines, writes or requests not kept)\n", r.Truncated)
	}
}

func oneLine(s string, limit int) string {
	s = strings.ReplaceAll(s, "\n", " ⏎ ")
	if len(s) > limit {
		s = s[:limit] + "…"
	}
	return s
}

func resourceVersion(obj map[string]any) string {
	meta, _ := obj["metadata"].(map[string]any)
	rv, _ := meta["resourceVersion"].(string)
	return rv
}

// admissionRecord prints an admission decision: who asked for what, the outcome, then its
// message, warnings, patch and error indented.
func admissionRecord(w io.Writer, r inspection.TraceRecord, withObject bool) {
	a := r.Admission
	obj := ""
	if withObject {
		obj = "  " + r.Resource + " " + r.Object
	}
	what := a.Operation
	if a.Subresource != "" {
		what += " " + a.Subresource
	}
	if a.DryRun {
		what += " (dry run)"
	}
	_, _ = fmt.Fprintf(w, "%s  %s  admission %s%s  %s  by %s  %s  %s\n", clock(r.Time), r.Script, what, obj, a.Webhook, orDash(a.User), r.Result, ms(r.DurationMs))
	if a.Message != "" {
		prefix := "message"
		if !a.Allowed {
			prefix = fmt.Sprintf("denied %d", a.Code)
		}
		_, _ = fmt.Fprintf(w, "    %s  %s\n", prefix, oneLine(a.Message, 300))
	}
	for _, warning := range a.Warnings {
		_, _ = fmt.Fprintf(w, "    warning  %s\n", oneLine(warning, 300))
	}
	if a.Patch != "" {
		_, _ = fmt.Fprintf(w, "    patch  %s\n", oneLine(a.Patch, 300))
	}
	if r.Error != "" {
		_, _ = fmt.Fprintf(w, "    error  %s\n", oneLine(r.Error, 300))
	}
}

// storeLine is one ctx.store call of a record: the value only when the record has it (the
// key is readable).
func storeLine(op inspection.StoreOp) string {
	line := op.Op
	if op.Shared != "" {
		line += " [" + op.Shared + "]"
	}
	line += " " + op.Key
	switch {
	case op.Op == "list":
		line += fmt.Sprintf(" -> %d keys", op.Count)
	case op.Op == "get" && !op.Found:
		line += " -> absent"
	}
	line += fmt.Sprintf("  %dB", op.Bytes)
	if op.Version != 0 {
		line += fmt.Sprintf(" v%d", op.Version)
	}
	if op.Value != "" {
		line += " = " + oneLine(op.Value, 200)
	}
	if op.Error != "" {
		line += "  " + oneLine(op.Error, 120)
	}
	return line
}
