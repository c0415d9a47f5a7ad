package inspect_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine/internal/inspect"
	"github.com/jsinformer/jsinformer/engine/internal/trace"
	"github.com/jsinformer/jsinformer/inspection"
)

var configmaps = dynamicinformer.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespaced: true}

// fakeLive is a serving version whose worker is a goroutine of the test: Do hands it fn, or
// refuses when the version is stopping. Methods Replay does not use are left to the embedded
// nil interface (calling one would panic the test).
type fakeLive struct {
	inspect.Live
	stopping bool
	work     chan func() // the worker's queue
	done     chan struct{}
}

func (f *fakeLive) Script() string { return "a.js" }
func (f *fakeLive) State() string  { return "current" }
func (f *fakeLive) Watches() []inspect.Watch {
	return []inspect.Watch{{Resource: configmaps}}
}
func (f *fakeLive) Do(fn func()) bool {
	if f.stopping {
		return false
	}
	f.work <- fn
	return true
}
func (f *fakeLive) Done() <-chan struct{} { return f.done }
func (f *fakeLive) Replay(_ inspect.Watch, key string, _ bool) (inspection.TraceRecord, error) {
	return inspection.TraceRecord{Object: key, Event: "replay", Result: "ok"}, nil
}

// Replay runs its call through Live.Do and answers with what the worker returned; it fails
// clearly when the version is stopping, stops before running the call, or the asker gives up,
// and refuses --dry-run with recording off before touching any version.
func TestReplayRunsOnTheWorkerAndWaitsForItsAnswer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		recording bool
		dryRun    bool
		stopping  bool
		worker    string // run: the worker runs fn; stop: it returns without running it; none
		cancel    bool
		wantErr   error // nil: a record of ns/a
		wantText  string
	}{
		{"the worker answers", true, false, false, "run", false, nil, ""},
		{"dry run with recording off", false, true, false, "none", false, inspection.ErrInvalid, "needs trace recording"},
		{"the version is stopping", true, false, true, "none", false, nil, "the version is stopping"},
		{"the version stops before the call", true, false, false, "stop", false, nil, "stopped before the call"},
		{"the asker gives up", true, false, false, "none", true, context.Canceled, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := &fakeLive{stopping: tt.stopping, work: make(chan func(), 1), done: make(chan struct{})}
			env := inspect.Env{Live: func() []inspect.Live { return []inspect.Live{v} }, Pauses: inspect.NewPauses(), Logger: slog.New(slog.DiscardHandler),
				Resolve: func(string) (dynamicinformer.Resource, error) { return configmaps, nil }}
			if tt.recording {
				env.Trace = trace.New(10)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			switch {
			case tt.worker == "run":
				go func() { (<-v.work)() }()
			case tt.worker == "stop":
				go func() { <-v.work; close(v.done) }()
			case tt.cancel:
				cancel()
			}
			rec, err := inspect.New(env).Replay(ctx, "a.js", "configmaps", "ns/a", tt.dryRun)
			if tt.wantErr == nil && tt.wantText == "" {
				if err != nil || rec.Object != "ns/a" || rec.Result != "ok" {
					t.Fatalf("Replay = %+v, %v; want the worker's record of ns/a", rec, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Replay = %+v, want an error", rec)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Replay error %v, want it to wrap %v", err, tt.wantErr)
			}
			if tt.wantText != "" && !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("Replay error %q, want it to say %q", err, tt.wantText)
			}
		})
	}
}

// Pause and Resume name only loaded scripts; a second Pause or Resume reports no change.
func TestPauseAndResumeOfLoadedScriptsOnly(t *testing.T) {
	t.Parallel()
	v := &fakeLive{done: make(chan struct{})}
	pauses := inspect.NewPauses()
	in := inspect.New(inspect.Env{Live: func() []inspect.Live { return []inspect.Live{v} }, Pauses: pauses, Logger: slog.New(slog.DiscardHandler)})
	if _, err := in.Pause("b.js"); !errors.Is(err, inspection.ErrNotFound) {
		t.Fatalf("Pause of an unknown script: %v, want ErrNotFound", err)
	}
	for _, step := range []struct {
		name       string
		act        func() (bool, error)
		wantChange bool
		wantPaused bool
	}{
		{"pause", func() (bool, error) { return in.Pause("a.js") }, true, true},
		{"pause again", func() (bool, error) { return in.Pause("a.js") }, false, true},
		{"resume", func() (bool, error) { return in.Resume("a.js") }, true, false},
		{"resume again", func() (bool, error) { return in.Resume("a.js") }, false, false},
	} {
		changed, err := step.act()
		if err != nil || changed != step.wantChange || pauses.Paused("a.js") != step.wantPaused {
			t.Fatalf("%s: changed %v, err %v, paused %v; want changed %v, paused %v", step.name, changed, err, pauses.Paused("a.js"), step.wantChange, step.wantPaused)
		}
	}
	if _, err := in.Resume("b.js"); !errors.Is(err, inspection.ErrNotFound) {
		t.Fatalf("Resume of an unknown script: %v, want ErrNotFound", err)
	}
}
