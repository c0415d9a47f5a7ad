package recording_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/jstest"
	"github.com/jsinformer/jsinformer/recording"
)

var (
	cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	nsGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// syncBuffer is a bytes.Buffer the test may read while Record writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func configMap(ns, name, v string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns}, "data": map[string]any{"v": v}}}
}

// Record against the real control plane, then replay the recording in a test file: the
// plugin sees in the harness what it would have seen in the cluster.
func TestRecordThenReplay(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ns := "rec-" + rand.String(6)
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	if _, err := dyn.Resource(nsGVR).Create(ctx, nsObj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := dyn.Resource(cmGVR).Namespace(ns)
	if _, err := cms.Create(ctx, configMap(ns, "before", "1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	w := recording.NewWriter(out)
	recCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- recording.Record(recCtx, recording.Config{Client: dyn, Discovery: disc, Resources: []string{"cm"}, Namespace: ns, Out: w})
	}()
	flushed := func() string { _ = w.Flush(); return out.String() }
	waitFor(t, flushed, `"initial":true`)
	if _, err := cms.Create(ctx, configMap(ns, "during", "1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Patch(ctx, "before", "application/merge-patch+json", []byte(`{"data":{"v":"2"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "during", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, flushed, `"type":"DELETED"`)
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Record: %v", err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	replay(t, ns, out.String())
}

func waitFor(t *testing.T, text func() string, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(text(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("recording lacks %s after 20s:\n%s", want, text())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// replay runs a test file that replays the recording and checks what the plugin saw.
func replay(t *testing.T, ns, recorded string) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"events.jsonl": recorded,
		"p.js": `export default { watch: "v1/configmaps",
  onAdd(cm, ctx) { log.info("add " + cm.metadata.name + " " + cm.data.v + " " + ctx.isInInitialList); },
  onUpdate(o, cm) { log.info("update " + cm.metadata.name + " " + cm.data.v); },
  onDelete(cm) { log.info("delete " + cm.metadata.name); } };`,
		"r.test.js": `test("replayed", () => {
  const h = harness("./p.js", { objects: ["events.jsonl"] });
  h.replay("events.jsonl");
  expect(h.logs.map((l) => l.message)).toEqual(["add before 1 true", "add during 1 false", "update before 2", "delete during"]);
  expect(h.get("v1/configmaps", "` + ns + `", "before").data.v).toBe("2");
});`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := jstest.RunFile(t.Context(), filepath.Join(dir, "r.test.js"), jstest.Options{})
	if res.Error != "" || len(res.Tests) != 1 || res.Tests[0].Status != jstest.Passed {
		t.Fatalf("replay: %+v %v\nrecording:\n%s", res, res.Tests[0].Failure, recorded)
	}
}
