package engine_test

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Two scripts recording the same Event at once, ten times each, make one Event counting 20:
// neither a second Event nor a lost repeat.
func TestConcurrentRepeatsOfOneEventAllCount(t *testing.T) {
	t.Parallel()
	ns := uniqueName("events")
	repeat := watchScript(ns, `  onAdd(cm) {
    for (let i = 0; i < 10; i++) k8s.event(cm, "Normal", "Seen", "the same event");
    log.info("recorded");
  },`)
	r := startEngine(t, map[string]string{"a.js": repeat, "b.js": repeat}, nil)
	r.namespace(t, ns)
	r.create(t, configmapsGVR, configmap(ns, "target", nil, nil))
	r.log.waitFor(t, "both scripts' repeats", 2, msg("recorded"))
	list, err := r.dyn.Resource(eventsGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var counts []int64
	for _, ev := range list.Items {
		n, _, _ := unstructured.NestedInt64(ev.Object, "count")
		counts = append(counts, n)
	}
	if fmt.Sprint(counts) != "[20]" {
		t.Fatalf("Event counts %v, want one Event counting 20", counts)
	}
}
