package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
)

// summary prints the table of phases: result, start after the run began, wall and CPU time.
func summary(out io.Writer, title string, plan []phase, results []result, began, finished time.Time, loadBefore string) {
	var cpu time.Duration
	overall := "ok"
	for _, r := range results {
		cpu += r.cpu
		if r.state != succeeded {
			overall = "FAIL"
		}
	}
	fmt.Fprintf(out, "\n%s: phases (wall: elapsed; cpu: user+sys of its processes, which a busy machine inflates far less)\n", title)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "phase\tresult\tstart\twall\tcpu\tafter")
	for i, p := range plan {
		r := results[i]
		start, wall := "-", "-"
		if !r.start.IsZero() {
			start, wall = "+"+clock(r.start.Sub(began)), clock(r.end.Sub(r.start))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.name, r.state, start, wall, clock(r.cpu), strings.Join(p.deps, ","))
	}
	fmt.Fprintf(tw, "total\t%s\t\t%s\t%s\n", overall, clock(finished.Sub(began)), clock(cpu))
	_ = tw.Flush()
	if loadBefore != "" {
		fmt.Fprintf(out, "load average (1, 5, 15 min): %s at the start, %s at the end\n", loadBefore, loadAverage())
	}
}

// clock formats d as m:ss (h:mm:ss past an hour).
func clock(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// loadAverage reads the 1, 5 and 15 minute load averages (Linux); "" elsewhere.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
