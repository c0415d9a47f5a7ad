package reconcile_test

import (
	"testing"

	"github.com/jsinformer/jsinformer/engine/internal/reconcile"
	"github.com/jsinformer/jsinformer/scripting"
)

// On real goja runtimes, Close ends every runtime's goroutine (scripting.LiveRuntimes, a
// process-wide count: this test is not parallel, so no parallel test runs beside it),
// started or not, also one stuck in an endless reconcile.
func TestCloseEndsRealRuntimes(t *testing.T) {
	prog, err := scripting.Compile("stuck.js", []byte(`export default {
  reconcile(key, ctx) { ctx.enqueue("started:" + key); while (true) {} },
};`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		start bool
	}{
		{name: "never started"},
		{name: "stuck in a run", start: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := scripting.LiveRuntimes()
			rts := make([]*scripting.Script, 3)
			for i := range rts {
				if rts[i], err = prog.Instantiate(scripting.Options{}); err != nil {
					t.Fatal(err)
				}
			}
			if got := scripting.LiveRuntimes() - before; got != 3 {
				t.Fatalf("%d runtimes live after instantiating 3", got)
			}
			started := make(chan string, 1)
			cfg := config(rts, newLimiter(), nil)
			cfg.Handles = func(key string) bool {
				if len(key) > 8 && key[:8] == "started:" {
					started <- key[8:]
					return false
				}
				return true
			}
			w := reconcile.New(cfg)
			if tc.start {
				w.Enqueue("ns/x", "test")
				w.Start()
				if key := recv(t, "the run to start", started); key != "ns/x" {
					t.Fatalf("reconcile ran on %q", key)
				}
			}
			within(t, "Close", w.Close)
			eventually(t, "every runtime's goroutine to end", func() bool { return scripting.LiveRuntimes() == before })
		})
	}
}
