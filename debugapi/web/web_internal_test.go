package web

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/status"
)

func TestRates(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_000_000, 0)
	rec := func(ago time.Duration, ms float64, result, handler string) inspection.TraceRecord {
		return inspection.TraceRecord{Script: "a.js", Time: now.Add(-ago), DurationMs: ms, Result: result, Handler: handler}
	}
	tests := []struct {
		name string
		recs []inspection.TraceRecord
		want Rates
	}{
		{"one hundred calls, durations 1..100 ms, five errors", func() []inspection.TraceRecord {
			var out []inspection.TraceRecord
			for i := 1; i <= 100; i++ {
				result := "ok"
				if i%20 == 0 {
					result = "error"
				}
				out = append(out, rec(time.Duration(i%5)*time.Second, float64(i), result, "onUpdate"))
			}
			return out
		}(), Rates{CallsPerSec: 10, Calls: 100, ErrorRate: 0.05, P95Ms: 95}},
		{"records of no call are not calls", []inspection.TraceRecord{rec(0, 1, "not called", ""), rec(0, 1, "paused", "onAdd")}, Rates{}},
		{"calls older than the window are gone", []inspection.TraceRecord{rec(2*time.Minute, 1, "ok", "onAdd")}, Rates{}},
		{"calls per second cover the last 10 s only", []inspection.TraceRecord{rec(30*time.Second, 4, "timeout", "reconcile"), rec(0, 2, "ok", "reconcile")},
			Rates{CallsPerSec: 0.1, Calls: 2, ErrorRate: 0.5, P95Ms: 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRates()
			for _, x := range tt.recs {
				r.add(x)
			}
			if got := r.snapshot(now)["a.js"]; got != tt.want {
				t.Errorf("rates %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestFrames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := "a\nb\nc\nd\ne\nf\ng\nh\n"
	if err := os.WriteFile(filepath.Join(dir, "x.js"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	failed := func(file string, line int) status.ScriptStatus {
		return status.ScriptStatus{Name: "x.js", Loads: []status.LoadStatus{{Hash: "0123", Result: status.LoadFailed, At: time.Unix(1, 0),
			Error: &status.ErrorStatus{Message: "boom", File: file, Line: line, Column: 1}}}}
	}
	tests := []struct {
		name      string
		sc        status.ScriptStatus
		wantLines []int
		wantNil   bool
		wantStale bool
	}{
		{"three lines either side", failed("x.js", 5), []int{2, 3, 4, 5, 6, 7, 8}, false, true},
		{"clipped at the top", failed("x.js", 1), []int{1, 2, 3, 4}, false, true},
		{"a line past the end has no lines", failed("x.js", 40), nil, false, true},
		{"nothing outside the folder is read", failed("../x.js", 2), nil, false, false},
		{"a load that worked has no frame", status.ScriptStatus{Name: "x.js", Loads: []status.LoadStatus{{Result: status.LoadLoaded}}}, nil, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &frames{dir: dir}
			fr := f.of(tt.sc)
			if tt.wantNil != (fr == nil) {
				t.Fatalf("frame %+v, want nil: %t", fr, tt.wantNil)
			}
			if fr == nil {
				return
			}
			var lines []int
			for _, l := range fr.Lines {
				lines = append(lines, l.Line)
			}
			if len(lines) != len(tt.wantLines) || (len(lines) > 0 && (lines[0] != tt.wantLines[0] || lines[len(lines)-1] != tt.wantLines[len(tt.wantLines)-1])) {
				t.Errorf("lines %v, want %v", lines, tt.wantLines)
			}
			if fr.Stale != tt.wantStale {
				t.Errorf("stale %t, want %t (the file's hash is not 0123…)", fr.Stale, tt.wantStale)
			}
		})
	}
}

func TestTopKeysKeepsRunningAndFailingFirst(t *testing.T) {
	t.Parallel()
	keys := make([]inspection.KeyState, 3*KeysPerScript)
	for i := range keys {
		keys[i].Key = string(rune('a' + i%26))
	}
	keys[len(keys)-1].Running = true
	keys[len(keys)-2].LastError, keys[len(keys)-2].Attempts = "x", 4
	got := topKeys(keys)
	if len(got) != KeysPerScript || !got[0].Running || got[1].LastError != "x" {
		t.Fatalf("topKeys kept %d keys, first %+v, second %+v", len(got), got[0], got[1])
	}
}
