package offline_test

import (
	"log/slog"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/jsinformer/jsinformer/internal/memcluster"
	"github.com/jsinformer/jsinformer/offline"
)

// observed is one OnAdmission call: its kind, the request's operation and name, and the
// calls' "script webhook outcome".
type observed struct {
	kind, op, name string
	calls          []string
	patched        bool
	denied         bool
}

// TestOnAdmissionSeesEachWritesDecisions: a write to the cluster hands OnAdmission the
// mutating webhooks' answer (with its patch), then the validating ones'; a denial by a
// validating webhook is in the second.
func TestOnAdmissionSeesEachWritesDecisions(t *testing.T) {
	t.Parallel()
	clock := clocktesting.NewFakeClock(epoch)
	cluster, err := memcluster.New(memcluster.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []observed
	h, err := offline.New(offline.Config{Cluster: cluster, Clock: clock, Logger: slog.New(slog.DiscardHandler),
		OnAdmission: func(kind string, req offline.AdmissionRequest, res offline.AdmissionResult) {
			o := observed{kind: kind, op: req.Operation, name: req.Name, patched: res.Patch != nil, denied: res.Err != nil}
			for _, c := range res.Calls {
				o.calls = append(o.calls, c.Script+" "+c.Webhook+" "+c.Decision.Outcome)
			}
			mu.Lock()
			seen = append(seen, o)
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	if err := h.Load(t.Context(), "script.js", []byte(teamPolicy)); err != nil {
		t.Fatal(err)
	}
	create := func(obj map[string]any) error {
		_, err := cluster.Create(configmapsGVR, "default", &unstructured.Unstructured{Object: obj}, memcluster.WriteOptions{})
		return err
	}
	if err := create(teamCM("default", "good", map[string]any{"team": "a"})); err != nil {
		t.Fatal(err)
	}
	if err := create(teamCM("default", "bad", nil)); err == nil || !strings.Contains(err.Error(), "a team label is required") {
		t.Fatalf("unlabelled create: err = %v, want the denial", err)
	}
	want := []observed{
		{kind: "mutate", op: "CREATE", name: "good", calls: []string{"script.js mutate allowed"}, patched: true},
		{kind: "validate", op: "CREATE", name: "good", calls: []string{"script.js validate allowed"}},
		{kind: "mutate", op: "CREATE", name: "bad", calls: []string{"script.js mutate allowed"}, patched: true},
		{kind: "validate", op: "CREATE", name: "bad", calls: []string{"script.js validate denied"}, denied: true},
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != len(want) {
		t.Fatalf("OnAdmission saw %+v, want %+v", seen, want)
	}
	for i := range want {
		if g, w := seen[i], want[i]; g.kind != w.kind || g.op != w.op || g.name != w.name || strings.Join(g.calls, ",") != strings.Join(w.calls, ",") ||
			g.patched != w.patched || g.denied != w.denied {
			t.Errorf("call %d = %+v, want %+v", i, g, w)
		}
	}
}
