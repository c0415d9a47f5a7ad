package dynamicinformer

import (
	"errors"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

// A misspelt name costs one discovery per ResetEvery, not one per lookup; a resource that
// appears is found once the next re-discovery is due.
func TestResolverThrottlesMisses(t *testing.T) {
	t.Parallel()
	disc := &fake.FakeDiscovery{Fake: &clienttesting.Fake{}}
	disc.Resources = []*metav1.APIResourceList{{GroupVersion: "v1", APIResources: []metav1.APIResource{
		{Name: "configmaps", Kind: "ConfigMap", Namespaced: true, Verbs: []string{"get", "list"}},
	}}}
	r := NewResolver(disc, nil)
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	r.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	discoveries := func() int {
		n := 0
		for _, a := range disc.Actions() {
			if a.GetResource().Resource == "group" {
				n++
			}
		}
		return n
	}

	if _, err := r.Resolve("configmaps"); err != nil {
		t.Fatal(err)
	}
	base := discoveries()
	for range 50 {
		if _, err := r.Resolve("widgets"); !errors.Is(err, ErrUnknownResource) {
			t.Fatalf("Resolve(widgets) = %v, want ErrUnknownResource", err)
		}
	}
	if got := discoveries() - base; got != 1 {
		t.Errorf("50 misses cost %d discoveries, want 1", got)
	}

	disc.Lock()
	disc.Resources[0].APIResources = append(disc.Resources[0].APIResources,
		metav1.APIResource{Name: "widgets", Kind: "Widget", Namespaced: true, Verbs: []string{"get", "list"}})
	disc.Unlock()
	if _, err := r.Resolve("widgets"); err == nil {
		t.Error("a miss was forgotten before the next re-discovery was due")
	}
	advance(ResetEvery)
	if res, err := r.Resolve("widgets"); err != nil || res.GVR.Resource != "widgets" {
		t.Fatalf("after %v: Resolve(widgets) = %v, %v", ResetEvery, res, err)
	}
	if got := discoveries() - base; got != 2 {
		t.Errorf("discoveries = %d, want 2", got)
	}
}
