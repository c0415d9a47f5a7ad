package engine

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// updateLog records what a script's onUpdate was given, per object, from its log lines:
// whether each call's old state was the new state of the call before (broken counts those
// that were not), and the last new state.
type updateLog struct {
	mu     sync.Mutex
	last   map[string]string
	calls  int
	broken []string
	warns  int
}

func (l *updateLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *updateLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *updateLog) WithGroup(string) slog.Handler            { return l }

func (l *updateLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.Level == slog.LevelWarn && strings.Contains(r.Message, "backlog over its limit") {
		l.warns++
	}
	if r.Message != "update" {
		return nil
	}
	attrs := map[string]string{}
	var add func(slog.Attr) bool
	add = func(a slog.Attr) bool {
		if a.Value.Kind() == slog.KindGroup {
			for _, g := range a.Value.Group() {
				add(g)
			}
			return true
		}
		attrs[a.Key] = a.Value.Resolve().String()
		return true
	}
	r.Attrs(add)
	name := attrs["name"]
	if prev, ok := l.last[name]; ok && attrs["old"] != prev {
		l.broken = append(l.broken, fmt.Sprintf("%s: old %s after a call with new %s", name, attrs["old"], prev))
	}
	l.last[name] = attrs["n"]
	l.calls++
	return nil
}

func (l *updateLog) snapshot() (last map[string]string, calls int, broken []string, warns int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	last = make(map[string]string, len(l.last))
	for k, v := range l.last {
		last[k] = v
	}
	return last, l.calls, append([]string(nil), l.broken...), l.warns
}

// slowUpdates logs each update it is given after spending 50 ms on it.
const slowUpdates = `onUpdate(old, cm) {
    const until = Date.now() + 50;
    while (Date.now() < until) {}
    log.info("update", { name: cm.metadata.name, old: (old.data || {}).n || "", n: cm.data.n });
  }`

// A handler taking 50 ms under 2,000 updates a second of 100 objects for 30 s, fed through
// the version's own client-go handler: past the backlog limit, updates of one object are
// coalesced, so the process's live heap stays flat; every call's old state is the new state of
// the call before for that object, and the last call for each object sees its final state.
// Not parallel: it measures the process's live heap.
func TestSlowHandlerUnderAnUpdateStorm(t *testing.T) {
	const objects, rate, limit = 100, 2000, 100
	const storm = 30 * time.Second
	source := newFakeSource(objects)
	e := loaderEngine(t, source)
	log := &updateLog{last: map[string]string{}}
	e.logger, e.cfg.MaxBacklog = slog.New(log), limit
	e.loadContent("a.js", cmScript("storm", slowUpdates))
	v := pending(e, "a.js")
	e.syncUntil(t, v)
	listener := handlerFor(v.ver.Subscriptions()[0])

	state := make([]*unstructured.Unstructured, objects)
	for i := range state {
		state[i] = stormObject(i, 0)
	}
	var heaps []uint64
	maxDepth := 0
	start := time.Now()
	sent := 0
	for elapsed := time.Duration(0); elapsed < storm; elapsed = time.Since(start) {
		for due := int(elapsed.Seconds() * rate); sent < due; sent++ {
			i := sent % objects
			next := stormObject(i, sent+1)
			listener.OnUpdate(state[i], next)
			state[i] = next
		}
		maxDepth = max(maxDepth, v.ver.Backlog())
		if len(heaps) < int(elapsed/(5*time.Second))+1 {
			heaps = append(heaps, liveHeapAfterGC())
		}
		time.Sleep(5 * time.Millisecond)
	}
	achieved := float64(sent) / time.Since(start).Seconds()
	heaps = append(heaps, liveHeapAfterGC())
	t.Logf("%d updates in %v (%.0f/s); queue depth at most %d; live heap every 5 s (MB): %v",
		sent, storm, achieved, maxDepth, inMB(heaps))
	if achieved < rate*0.95 {
		t.Errorf("fed %.0f updates/s, want %d", achieved, rate)
	}
	if maxDepth > limit+objects {
		t.Errorf("queue depth reached %d, want at most the limit %d plus one update per object", maxDepth, limit)
	}
	// From the first sample (taken 5 s in, the backlog at its limit) the heap stays flat:
	// without coalescing, the 2 KB states queued would add over 100 MB.
	if grew := int64(heaps[len(heaps)-1]) - int64(heaps[1]); grew > 20<<20 {
		t.Errorf("live heap grew %d MB during the storm, want flat (under 20 MB)", grew>>20)
	}
	eventually(t, func() error {
		if !v.ver.QueuesIdle() {
			return fmt.Errorf("queue still holds %d events", v.ver.Backlog())
		}
		return nil
	})
	last, calls, broken, warns := log.snapshot()
	for i, obj := range state {
		want, _, _ := unstructured.NestedString(obj.Object, "data", "n")
		if got := last[obj.GetName()]; got != want {
			t.Errorf("object %d: last call saw n=%q, want the final %q", i, got, want)
		}
	}
	if len(broken) > 0 {
		t.Errorf("%d calls were not given the previous call's state as old, e.g. %s", len(broken), broken[0])
	}
	coalesced := series(t, e, "jsinformer_events_coalesced_total", "script", "a.js")
	t.Logf("%d handler calls, %.0f updates coalesced, %d WARN lines", calls, coalesced, warns)
	if int(coalesced)+calls != sent {
		t.Errorf("%d calls + %.0f coalesced = %d, want the %d updates sent", calls, coalesced, calls+int(coalesced), sent)
	}
	if warns < 1 {
		t.Error("no WARN that the backlog passed its limit")
	}
}

// stormObject is state n of ConfigMap cm-i as the fake source lists it, with 2 KB of data.
func stormObject(i, n int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": fmt.Sprintf("cm-%d", i), "namespace": "ns", "uid": fmt.Sprint(i),
			"resourceVersion": fmt.Sprint(n + 1)},
		"data": map[string]any{"n": fmt.Sprint(n), "payload": strings.Repeat(fmt.Sprint(n%10), 2048)}}}
}

// liveHeapAfterGC is the heap a full collection leaves live, from runtime/metrics.
func liveHeapAfterGC() uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

func inMB(bytes []uint64) []uint64 {
	out := make([]uint64, len(bytes))
	for i, b := range bytes {
		out[i] = b >> 20
	}
	return out
}
