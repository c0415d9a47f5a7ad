package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/jsinformer/jsinformer/plugins"
)

// TestLoadFailuresWaitForTheirContentToSettle drives the loader with the watcher's events: a
// failure of Settling content counts (jsinformer_script_loads_total{result="failed"}) only
// once the watcher says that content settled; newer content or a removal drops it; content
// whose failure was the last reported is not reported again.
func TestLoadFailuresWaitForTheirContentToSettle(t *testing.T) {
	t.Parallel()
	const (
		broken  = "export default {"
		broken2 = "export default { onAdd: 5 };"
		half    = "export def"
	)
	good := cmScript("good", `onAdd() {}`)
	type step struct {
		kind     plugins.EventKind
		content  string
		settling bool
		failed   float64 // the counter after the step
	}
	loaded := func(content string) step { return step{kind: plugins.Loaded, content: content, settling: true} }
	settled := func(content string) step { return step{kind: plugins.Settled, content: content} }
	tests := []struct {
		name  string
		steps []step
	}{
		{name: "reported once settled", steps: []step{
			loaded(broken), settled(broken2), {kind: plugins.Settled, content: broken, failed: 1},
		}},
		{name: "not Settling: reported at once", steps: []step{
			{kind: plugins.Loaded, content: broken, failed: 1}, {kind: plugins.Settled, content: broken, failed: 1},
		}},
		{name: "superseded by content that loads", steps: []step{
			loaded(half), loaded(good), settled(half), settled(good),
		}},
		{name: "superseded by other broken content", steps: []step{
			loaded(half), loaded(broken), settled(half), {kind: plugins.Settled, content: broken, failed: 1},
		}},
		{name: "superseded by removal", steps: []step{
			loaded(half), {kind: plugins.Removed}, settled(half),
		}},
		{name: "the same broken content saved again through a half-written state", steps: []step{
			loaded(broken), {kind: plugins.Settled, content: broken, failed: 1},
			{kind: plugins.Loaded, content: "", settling: true, failed: 1},
			{kind: plugins.Loaded, content: broken, settling: true, failed: 1},
			{kind: plugins.Settled, content: broken, failed: 1},
		}},
		{name: "broken again after content that loaded", steps: []step{
			loaded(broken), {kind: plugins.Settled, content: broken, failed: 1},
			{kind: plugins.Loaded, content: good, settling: true, failed: 1},
			{kind: plugins.Loaded, content: broken, settling: true, failed: 1},
			{kind: plugins.Settled, content: broken, failed: 2},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := loaderEngine(t, newFakeSource(1))
			for i, st := range tt.steps {
				sum := sha256.Sum256([]byte(st.content))
				src := plugins.Source{Name: "a.js", Content: []byte(st.content), Hash: hex.EncodeToString(sum[:6]), Settling: st.settling}
				if st.kind != plugins.Loaded {
					src.Content, src.Settling = nil, false
				}
				e.onPluginEvent(plugins.Event{Kind: st.kind, Source: src})
				if got := series(t, e, "jsinformer_script_loads_total", "script", "a.js", "result", "failed"); got != st.failed {
					t.Fatalf("step %d (%v %q): failed loads counted %v, want %v", i, st.kind, st.content, got, st.failed)
				}
			}
		})
	}
}
