package enginemetrics_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/jsinformer/jsinformer/engine/internal/enginemetrics"
	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/status"
)

// Each call lands in one result series and in the state API's counters.
func TestHandlerObserve(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := enginemetrics.NewEngine(reg)
	var counts status.CallCounts
	h := m.Handler("a.js", "onAdd", &counts)
	for _, err := range []error{nil, nil, errors.New("boom"), fmt.Errorf("call: %w", scripting.ErrTimeout), scripting.ErrStuck} {
		h.Observe(time.Millisecond, err)
	}
	want := `# HELP jsinformer_handler_calls_total Calls of the handlers a script defines, by script, handler and result (ok, error, timeout, stuck: a call that did not stop after its timeout, whose runtime was abandoned).
# TYPE jsinformer_handler_calls_total counter
jsinformer_handler_calls_total{handler="onAdd",result="error",script="a.js"} 1
jsinformer_handler_calls_total{handler="onAdd",result="ok",script="a.js"} 2
jsinformer_handler_calls_total{handler="onAdd",result="stuck",script="a.js"} 1
jsinformer_handler_calls_total{handler="onAdd",result="timeout",script="a.js"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "jsinformer_handler_calls_total"); err != nil {
		t.Error(err)
	}
	if counts.Calls.Load() != 5 || counts.Errors.Load() != 3 || counts.Timeouts.Load() != 1 || counts.Stuck.Load() != 1 {
		t.Errorf("state counters: calls %d errors %d timeouts %d stuck %d, want 5 3 1 1",
			counts.Calls.Load(), counts.Errors.Load(), counts.Timeouts.Load(), counts.Stuck.Load())
	}
}

// A memory-guard stop counts a stopped load and shows the script stopped until lifted; a
// removed script leaves no series.
func TestMemoryStopAndForget(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := enginemetrics.NewEngine(reg)
	count := func(family string) int {
		n, err := testutil.GatherAndCount(reg, family)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	m.Loaded("a.js", "loaded", time.Second)
	m.MemoryMeasured("a.js", 1<<20)
	m.MemoryStopped("a.js", 7)
	if count("jsinformer_script_memory_bytes") != 0 || count("jsinformer_script_stopped") != 1 || count("jsinformer_script_loads_total") != 2 {
		t.Fatalf("after a stop: memory %d, stopped %d, loads %d series; want 0, 1, 2 (loaded and stopped)",
			count("jsinformer_script_memory_bytes"), count("jsinformer_script_stopped"), count("jsinformer_script_loads_total"))
	}
	m.StopLifted("a.js")
	if n := count("jsinformer_script_stopped"); n != 0 {
		t.Fatalf("%d stopped series after the stop was lifted", n)
	}
	m.LoadFailed("a.js")
	m.Forget("a.js")
	for _, family := range []string{"jsinformer_script_loads_total", "jsinformer_script_load_duration_seconds", "jsinformer_memory_guard_stops_total", "jsinformer_memory_guard_dropped_total"} {
		if n := count(family); n != 0 {
			t.Errorf("%s: %d series after Forget", family, n)
		}
	}
}

type fakeBacklog struct {
	script, version string
	queued          int
}

func (b *fakeBacklog) QueueDepth() (string, string, int) { return b.script, b.version, b.queued }

// Two live versions of one script with the same content (A, B, A again while the first A
// drains) are one queue-depth series, their sum: a scrape never fails on the versions' life.
func TestQueueDepthOfVersionsWithOneContent(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := enginemetrics.NewEngine(reg)
	first, other, again := &fakeBacklog{"a.js", "aaa", 3}, &fakeBacklog{"a.js", "bbb", 1}, &fakeBacklog{"a.js", "aaa", 4}
	for _, v := range []*fakeBacklog{first, other, again} {
		m.VersionAdded(v)
	}
	want := `# HELP jsinformer_queue_depth Events queued for a script version and not yet handled.
# TYPE jsinformer_queue_depth gauge
jsinformer_queue_depth{script="a.js",version="aaa"} 7
jsinformer_queue_depth{script="a.js",version="bbb"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "jsinformer_queue_depth"); err != nil {
		t.Error(err)
	}
	m.VersionEnded(first)
	want = strings.Replace(want, "} 7", "} 4", 1)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "jsinformer_queue_depth"); err != nil {
		t.Error(err)
	}
}
