package engine_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jsinformer/jsinformer/engine"
)

// A handler taking 50 ms while the real API server delivers updates of 20 ConfigMaps as fast
// as four writers make them, for 10 s, with --max-backlog 20: updates are coalesced (counted,
// one WARN naming the script at least), each call's old state is the new state of the call
// before for that object, and the last call for every object sees its final state.
// engine's TestSlowHandlerUnderAnUpdateStorm drives 2,000 updates a second through the queue.
func TestSlowHandlerCoalescesServerUpdates(t *testing.T) {
	t.Parallel()
	const objects, writers = 20, 4
	ns := uniqueName("overload")
	reg := prometheus.NewPedanticRegistry()
	r := startEngine(t, map[string]string{"slow.js": watchScript(ns, `  onUpdate(old, cm) {
    const until = Date.now() + 50;
    while (Date.now() < until) {}
    log.info("update", { name: cm.metadata.name, old: old.data.n, n: cm.data.n });
  },`)}, func(c *engine.Config) { c.Registerer, c.MaxBacklog = reg, 20 })
	r.namespace(t, ns)
	for i := range objects {
		r.create(t, configmapsGVR, configmap(ns, fmt.Sprintf("c%d", i), nil, map[string]any{"n": "0"}))
	}
	end := time.Now().Add(10 * time.Second)
	var wg sync.WaitGroup
	var mu sync.Mutex
	sent := 0
	for w := range writers {
		wg.Go(func() {
			for n := 1; time.Now().Before(end); n++ {
				name := fmt.Sprintf("c%d", (n*writers+w)%objects)
				if err := r.tryPatch(t, configmapsGVR, ns, name, fmt.Sprintf(`{"data":{"n":"%d-%d"}}`, w, n)); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				sent++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// Each call logs the n it was given, old and new.
	updated := call{Script: "slow.js", Handler: "onUpdate", Result: "ok", Logged: "update"}.match
	final := map[string]string{}
	for _, kv := range splitState(serverState(t, r, ns)) {
		final[kv[0]] = kv[1]
	}
	eventually(t, "the last call for every object to see its final state", func() error {
		last := map[string]string{}
		for _, rec := range r.calls.find(updated) {
			last[logAttr(rec, "update", "name")] = logAttr(rec, "update", "n")
		}
		for name, n := range final {
			if last[name] != n {
				return fmt.Errorf("%s: last call saw n=%q, final n=%q", name, last[name], n)
			}
		}
		return nil
	})
	r.calls.complete(t)
	calls := r.calls.find(updated)
	prev := map[string]string{}
	for _, rec := range calls {
		name, old := logAttr(rec, "update", "name"), logAttr(rec, "update", "old")
		if p, ok := prev[name]; ok && old != p {
			t.Errorf("%s: a call was given old n=%q after a call with new n=%q", name, old, p)
		}
		prev[name] = logAttr(rec, "update", "n")
	}
	coalesced := metricValue(t, reg, "jsinformer_events_coalesced_total", map[string]string{"script": "slow.js"})
	warns := r.log.find(msg("script backlog over its limit: coalescing updates of the same object until it catches up", "script", "slow.js"))
	t.Logf("%d updates written in 10 s, %d handler calls, %v coalesced, %d WARN lines", sent, len(calls), coalesced, len(warns))
	if coalesced == 0 || len(warns) == 0 {
		t.Errorf("coalesced %v updates with %d WARN lines; want some of both", coalesced, len(warns))
	}
}

// splitState turns serverState's "name=n,..." into pairs.
func splitState(state string) [][2]string {
	var out [][2]string
	for _, kv := range strings.Split(state, ",") {
		if name, n, ok := strings.Cut(kv, "="); ok {
			out = append(out, [2]string{name, n})
		}
	}
	return out
}
