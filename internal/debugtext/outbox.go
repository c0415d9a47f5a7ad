package debugtext

import (
	"fmt"
	"io"
	"time"

	"github.com/jsinformer/jsinformer/status"
)

// printOutbox lists the outboxes of the serving versions (docs/once.md): messages by state
// and the latest given up, with their last error.
func printOutbox(w io.Writer, scripts []status.ScriptStatus) {
	var boxes []status.ScriptStatus
	for _, s := range scripts {
		if v, ok := s.Current(); ok && v.Outbox != nil {
			boxes = append(boxes, s)
		}
	}
	if len(boxes) == 0 {
		return
	}
	_, _ = fmt.Fprintln(w, "\nOutbox (as last listed):")
	t := newTable(w)
	row(t, "SCRIPT", "PENDING", "DELIVERING", "DONE", "FAILED", "LISTED")
	for _, s := range boxes {
		v, _ := s.Current()
		o := v.Outbox
		row(t, s.Name, o.Pending, o.Claimed, o.Done, o.Failed, o.Listed.Format(time.RFC3339))
	}
	_ = t.Flush()
	for _, s := range boxes {
		v, _ := s.Current()
		for _, f := range v.Outbox.Failures {
			_, _ = fmt.Fprintf(w, "  %s: %q failed after %d attempts at %s: %s\n", s.Name, f.Key, f.Attempts, f.Time.Format(time.RFC3339), f.Error)
		}
	}
}
