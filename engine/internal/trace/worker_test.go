package trace_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/engine/internal/trace"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/scripting"
)

// A Worker shows its call in flight while it runs, whether it records or not; when it
// records, the call's log lines land in its record, the outcome is set, and Done hands the
// Recorder a copy and clears the Worker's own record for the next event.
func TestWorkerRecordsOneCallAndShowsItInFlight(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		recording bool
		err       error
		want      string // the record's Result
	}{
		{"recording, handler ok", true, nil, "ok"},
		{"recording, handler failed", true, errors.New("boom"), "error"},
		{"recording, handler timed out", true, scripting.ErrTimeout, "timeout"},
		{"recording off", false, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var rec *trace.Recorder
			var out bytes.Buffer // the log the tap passes every line on to
			opts := scripting.Options{Logger: slog.New(slog.NewTextHandler(&out, nil))}
			var w *trace.Worker
			if tt.recording {
				rec = trace.New(10)
				tapped, tap := trace.Tapped(opts, false, nil)
				opts, w = tapped, trace.NewWorker(rec, tap)
			} else {
				w = trace.NewWorker(nil, nil)
			}
			r := w.Start(inspection.TraceRecord{Script: "a.js", Resource: "v1/configmaps", Object: "ns/a", Event: "add"})
			if (r != nil) != tt.recording {
				t.Fatalf("Start returned %v, want a record only when recording", r)
			}
			if r != nil && r.Result != "not called" {
				t.Errorf("a started record's result is %q, want not called", r.Result)
			}
			w.Call("onAdd", "v1/configmaps", "ns/a", r, false)
			if c := w.InFlight(); c == nil || c.Handler != "onAdd" || c.Object != "ns/a" {
				t.Fatalf("in flight during the call: %+v, want onAdd of ns/a", c)
			}
			opts.Logger.Info("from the script")
			w.Ended("onAdd", r, 2*time.Millisecond, tt.err)
			if c := w.InFlight(); c != nil {
				t.Errorf("in flight after the call: %+v, want none", c)
			}
			opts.Logger.Info("after the call") // a stuck runtime's late line lands nowhere
			w.Done(r)
			if n := strings.Count(out.String(), "\n"); n != 2 {
				t.Errorf("the log got %d lines, want both: %s", n, out.String())
			}
			got, _ := rec.Object("v1/configmaps", "ns/a", 0)
			if !tt.recording {
				if len(got) != 0 {
					t.Fatalf("recording off kept %d records", len(got))
				}
				return
			}
			if len(got) != 1 || got[0].Result != tt.want || got[0].Handler != "onAdd" || got[0].DurationMs != 2 {
				t.Fatalf("recorded %+v, want one onAdd record, result %s, 2 ms", got, tt.want)
			}
			if len(got[0].Logs) != 1 || got[0].Logs[0].Message != "from the script" {
				t.Errorf("recorded logs %+v, want the one line logged during the call", got[0].Logs)
			}
			if r.Script != "" || r.Logs != nil {
				t.Errorf("the Worker's record after Done is %+v, want it cleared", *r)
			}
		})
	}
}

// A nil Worker (a version built without inspection, in unit tests) records and shows nothing,
// and Done still clears a record it is handed.
func TestNilWorkerIsInert(t *testing.T) {
	t.Parallel()
	var w *trace.Worker
	if w.Recording() || w.Start(inspection.TraceRecord{}) != nil || w.InFlight() != nil || w.Tap() != nil {
		t.Fatal("a nil Worker records or shows something")
	}
	w.Call("onAdd", "v1/configmaps", "ns/a", nil, false)
	r := &inspection.TraceRecord{Script: "a.js"}
	w.Done(r)
	if r.Script != "" {
		t.Errorf("Done left %+v, want it cleared", *r)
	}
}
