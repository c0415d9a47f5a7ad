package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/status"
)

// TestChangeDuringASplitReplay: a version's replay of the cache reaches its index stage as
// one batch, which the stage splits across its two index runtimes; both stall inside their
// first index call (two "stalled" records: without the split only one runtime would run). A
// save, or the file's removal, arriving then ends that version (its stalled calls are
// interrupted, by their deadline at the latest, and the goroutine computing the second half is
// joined) and it never serves; after a save the newest version serves with every cached
// object indexed by its own function.
func TestChangeDuringASplitReplay(t *testing.T) {
	t.Parallel()
	const objects = 200
	for _, tt := range []struct {
		name   string
		change func(t *testing.T, r *runner, next string)
	}{
		{"save", func(t *testing.T, r *runner, next string) { r.write(t, "a.js", next) }},
		{"unload", func(t *testing.T, r *runner, _ string) {
			if err := os.Remove(filepath.Join(r.dir, "a.js")); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ns := uniqueName("split-" + tt.name)
			script := func(version int, stall bool) string {
				return watchScript(ns, fmt.Sprintf(`  indexers: { by: (cm) => {
    if (%t && first) {
      first = false; // once per runtime: each index runtime stalls in its first call
      log.info("stalled", { version: %d });
      const until = Date.now() + 60000; // ended early by an interrupt
      while (Date.now() < until) {}
    }
    return [cm.data.color + "-%d"];
  } },
  onAdd(cm, ctx) {
    if (cm.metadata.name !== "probe") return;
    const counts = ["c0", "c1", "c2", "c3"].map((c) => ctx.cache.indexKeys("by", c + "-%d").length);
    log.info("probe", { version: %d, counts: counts.join(",") });
  },`, stall, version, version, version, version)) + "\nlet first = true;\n"
			}
			r := startEngine(t, map[string]string{"a.js": script(0, false)}, nil)
			r.namespace(t, ns)
			for i := range objects {
				r.create(t, configmapsGVR, configmap(ns, fmt.Sprintf("c-%03d", i), nil, map[string]any{"color": fmt.Sprintf("c%d", i%4)}))
			}
			waitScript(t, r.engine, "a.js", "every object cached", func(s status.ScriptStatus) bool {
				v, ok := s.Version(hashOf(script(0, false)))
				return ok && v.Objects == objects
			})
			v1, v2 := script(1, true), script(2, false)
			r.write(t, "a.js", v1)
			// Index functions have no trace record: the stalls are known by what the script logs.
			r.log.waitFor(t, "both index runtimes of version 1 stalled in its replay", 2, msg("stalled", "version", "1"))
			changed := time.Now()
			tt.change(t, r, v2)
			if tt.name == "unload" {
				waitGone(t, r, "a.js") // its last version, the stalled one, is done
			} else {
				waitScript(t, r.engine, "a.js", "version 1 done", func(s status.ScriptStatus) bool {
					v, ok := s.Version(hashOf(v1))
					return ok && v.State == status.VersionDone
				})
			}
			if took := time.Since(changed); took > 20*time.Second {
				t.Errorf("version 1 took %s to end: its stalled calls were not interrupted", took)
			}
			// The log, not the state API: an unloaded script's loads are forgotten with it.
			if got := r.log.find(msg("script reloaded", "version", hashOf(v1))); len(got) != 0 {
				t.Fatalf("the version stalled in its replay served: %v", got)
			}
			if tt.name == "unload" {
				return
			}
			waitLoad(t, r, "a.js", status.LoadReloaded, hashOf(v2))
			r.create(t, configmapsGVR, configmap(ns, "probe", nil, map[string]any{"color": "x"}))
			per := objects / 4
			r.calls.waitFor(t, "version 2 indexed every object", 1, call{Script: "a.js", Version: hashOf(v2), Object: ns + "/probe", Result: "ok",
				Logged: "probe", Attrs: map[string]string{"counts": fmt.Sprintf("%d,%d,%d,%d", per, per, per, per)}}.match)
		})
	}
}
