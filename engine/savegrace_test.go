package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/plugins"
	"github.com/jsinformer/jsinformer/status"
)

// TestSaveInPlaceInTwoParts saves a script in place as a slow writer does: the truncate and
// half of the new content, a pause longer than the debounce (so the half is read and does not
// compile), then the rest. A pause within the grace period reports nothing: the whole file
// loads. A pause past it reports the half-written content's error once, naming its hash, and
// the whole file then loads and serves.
func TestSaveInPlaceInTwoParts(t *testing.T) {
	t.Parallel()
	const grace = plugins.DefaultGrace
	for i, pause := range []time.Duration{100 * time.Millisecond, 300 * time.Millisecond, time.Second} {
		t.Run(pause.String(), func(t *testing.T) {
			t.Parallel()
			ns := uniqueName(fmt.Sprintf("save-parts-%d", i))
			v1, v2 := taggedScript(ns, "v1"), taggedScript(ns, "v2")
			half := v2[:len(v2)/2]
			reg := prometheus.NewPedanticRegistry()
			r := startEngine(t, map[string]string{"a.js": v1}, func(c *engine.Config) { c.Registerer = reg })
			r.namespace(t, ns)
			r.create(t, configmapsGVR, configmap(ns, "first", nil, nil))
			r.calls.waitFor(t, "v1 sees first", 1, addBy(v1, ns+"/first", nil))

			f, err := os.OpenFile(filepath.Join(r.dir, "a.js"), os.O_WRONLY|os.O_TRUNC, 0o644)
			mustDo(t, err)
			defer f.Close()
			began := time.Now()
			_, err = f.WriteString(half)
			mustDo(t, err)
			time.Sleep(pause) // the slow writer's pause; what follows depends on how long it was
			reported := pause > grace
			if reported {
				// The half's failed load: the version the engine read, the one still serving.
				waitLoad(t, r, "a.js", status.LoadFailed, hashOf(half))
				// The operator's contract: the ERROR names what still runs.
				fails := r.log.find(msg("script not loaded", "script", "a.js", "version", hashOf(half)))
				if len(fails) != 1 {
					t.Fatalf("script not loaded logged %d times for the half, want once", len(fails))
				}
				if got, want := fails[0].attrs["running_version"], hashOf(v1); got != want {
					t.Errorf("script not loaded: running_version = %s, want %s", got, want)
				}
			}
			_, err = f.WriteString(v2[len(half):])
			mustDo(t, err)
			mustDo(t, f.Close())
			wrote := time.Since(began)

			waitLoad(t, r, "a.js", status.LoadReloaded, hashOf(v2))
			r.calls.waitFor(t, "v2 gets the cache", 1, addBy(v2, ns+"/first", initial(true)))
			// Once the whole file has settled, a report of the half can no longer come.
			r.log.waitFor(t, "the whole file settled", 1, msg("script file settled", "script", "a.js", "version", hashOf(v2)))
			if !reported && wrote >= grace {
				t.Logf("the rest came %v after the half, past the %v grace: the half may be reported", wrote, grace)
				return
			}
			want := 0.0
			if reported {
				want = 1
			}
			if err := wantMetric(t, reg, "jsinformer_script_loads_total", map[string]string{"script": "a.js", "result": "failed"}, want); err != nil {
				t.Error(err)
			}
			if got := r.log.find(msg("script not loaded")); float64(len(got)) != want {
				t.Errorf("script not loaded logged %d times, want %v: %v", len(got), want, got)
			}
		})
	}
}

// TestSaveInSeveralWrites saves a script in place in four writes after the truncate, with the
// default debounce: back to back, with pauses shorter than the debounce, and with pauses longer
// than it (but within the grace period). Whatever a rescan read in the middle, the save ends
// with one version, of the final content, serving: no half-written content is ever loaded or
// reported, and the final content's handlers see the cache once.
func TestSaveInSeveralWrites(t *testing.T) {
	t.Parallel()
	for i, pause := range []time.Duration{0, engine.DefaultDebounce / 5, 3 * engine.DefaultDebounce} {
		t.Run(pause.String(), func(t *testing.T) {
			t.Parallel()
			ns := uniqueName(fmt.Sprintf("save-writes-%d", i))
			v1, v2 := taggedScript(ns, "v1"), taggedScript(ns, "v2")
			reg := prometheus.NewPedanticRegistry()
			r := startEngine(t, map[string]string{"a.js": v1}, func(c *engine.Config) {
				c.Registerer = reg
				c.Debounce = engine.DefaultDebounce
			})
			r.namespace(t, ns)
			r.create(t, configmapsGVR, configmap(ns, "first", nil, nil))
			r.calls.waitFor(t, "v1 sees first", 1, addBy(v1, ns+"/first", nil))

			f, err := os.OpenFile(filepath.Join(r.dir, "a.js"), os.O_WRONLY|os.O_TRUNC, 0o644)
			mustDo(t, err)
			defer f.Close()
			const parts = 4
			began := time.Now()
			for p := range parts {
				if p > 0 && pause > 0 {
					time.Sleep(pause) // the writer's pause between two writes of one save
				}
				_, err = f.WriteString(v2[p*len(v2)/parts : (p+1)*len(v2)/parts])
				mustDo(t, err)
			}
			mustDo(t, f.Close())
			wrote := time.Since(began)

			waitLoad(t, r, "a.js", status.LoadReloaded, hashOf(v2))
			r.calls.waitFor(t, "v2 gets the cache", 1, addBy(v2, ns+"/first", initial(true)))
			// Once the whole file has settled, a report of a part can no longer come.
			r.log.waitFor(t, "the whole file settled", 1, msg("script file settled", "script", "a.js", "version", hashOf(v2)))
			s := waitScript(t, r.engine, "a.js", "v2 serving", func(s status.ScriptStatus) bool {
				v, ok := s.Version(hashOf(v2))
				return ok && v.State == status.VersionCurrent
			})
			if wrote >= plugins.DefaultGrace {
				t.Logf("the machine stalled the save for %v, past the %v grace: a part may be reported", wrote, plugins.DefaultGrace)
				return
			}
			for _, l := range s.Loads {
				if l.Hash != hashOf(v1) && l.Hash != hashOf(v2) {
					t.Errorf("a load of content other than the old and the final one: %+v", l)
				}
			}
			if got := r.log.find(msg("script not loaded")); len(got) != 0 {
				t.Errorf("script not loaded logged %d times, want none: %v", len(got), got)
			}
			if got := r.calls.find(addBy(v2, ns+"/first", nil)); len(got) != 1 {
				t.Errorf("v2's onAdd of first ran %d times, want once (one version serving)", len(got))
			}
			if err := wantMetric(t, reg, "jsinformer_script_loads_total", map[string]string{"script": "a.js", "result": "failed"}, 0); err != nil {
				t.Error(err)
			}
		})
	}
}
