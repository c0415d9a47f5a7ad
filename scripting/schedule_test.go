package scripting

import (
	"slices"
	"testing"
	"time"
)

func TestScheduleDefinitionAndRun(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "s.js", `let runs = 0;
export default {
  schedule: [
    { every: "90s", run(ctx) { runs++; if (ctx.resource !== "v1/pods") throw new Error("ctx"); } },
    { cron: "@hourly", run() { throw new Error("boom " + runs); } },
  ],
};`, Options{Timeout: time.Second})
	want := []ScheduleSpec{{Every: 90 * time.Second}, {Cron: "@hourly"}}
	if got := s.Definition().Schedules; !slices.Equal(got, want) {
		t.Fatalf("schedules = %+v, want %+v", got, want)
	}
	if err := s.RunSchedule(0, Event{Resource: "v1/pods"}); err != nil {
		t.Fatalf("schedule[0]: %v", err)
	}
	err := s.RunSchedule(1, Event{})
	if err == nil || err.Error() != "s.js:5:38: Error: boom 1" {
		t.Fatalf("schedule[1] = %v, want the script's error with its position and the state it kept", err)
	}
	base := time.Date(2026, 12, 1, 4, 10, 0, 0, time.UTC)
	if got := want[1].Next(base); !got.Equal(time.Date(2026, 12, 1, 5, 0, 0, 0, time.UTC)) {
		t.Errorf("@hourly after 04:10 = %v, want 05:00", got)
	}
	if got := want[0].Next(base); !got.Equal(base.Add(90 * time.Second)) {
		t.Errorf("every 90s after %v = %v", base, got)
	}
}

func TestEnqueueModes(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "e.js", `export default {
  watch: [
    "v1/configmaps",
    { resource: "apps/v1/deployments", enqueue: "owner" },
    { resource: "v1/secrets", enqueue: false },
    { resource: "v1/pods", enqueue: (p) => p.metadata.labels ? ["ns/" + p.metadata.labels.app, "ns/all"] : null },
  ],
  reconcile() {},
};`, Options{Timeout: time.Second})
	var modes []EnqueueMode
	for _, w := range s.Definition().Watch {
		modes = append(modes, w.Enqueue)
	}
	if want := []EnqueueMode{EnqueueSelf, EnqueueOwner, EnqueueNone, EnqueueFunc}; !slices.Equal(modes, want) {
		t.Fatalf("modes = %v, want %v", modes, want)
	}
	keys, err := s.EnqueueKeys(3, Object{"metadata": map[string]any{"labels": map[string]any{"app": "web"}}})
	if err != nil || !slices.Equal(keys, []string{"ns/web", "ns/all"}) {
		t.Fatalf("EnqueueKeys = %v, %v", keys, err)
	}
	if keys, err := s.EnqueueKeys(3, Object{"metadata": map[string]any{}}); err != nil || keys != nil {
		t.Fatalf("EnqueueKeys without labels = %v, %v; want none", keys, err)
	}
	if keys, err := s.EnqueueKeys(0, Object{}); err != nil || keys != nil {
		t.Fatalf("EnqueueKeys on an entry without a function = %v, %v; want nothing", keys, err)
	}
}
