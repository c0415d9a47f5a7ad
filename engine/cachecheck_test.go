package engine_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// cacheCheck proves that nothing changes an object once it is in an informer's cache: not a
// handler, a view, a reload, a client response decoded with shared subtrees, nor the engine.
// It keeps each cached object's JSON as it entered and compares it after the engine has
// stopped. Every engine of these tests runs under it, the examples' included.
type cacheCheck struct {
	mu      sync.Mutex
	entered map[*unstructured.Unstructured][]byte
}

func newCacheCheck() *cacheCheck {
	return &cacheCheck{entered: map[*unstructured.Unstructured][]byte{}}
}

// record is the engine's onCached hook, on the informers' goroutines.
func (c *cacheCheck) record(u *unstructured.Unstructured) {
	data, err := json.Marshal(u.Object)
	if err != nil {
		panic(err) // the object came from JSON
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, seen := c.entered[u]; !seen {
		c.entered[u] = data
	}
}

// verify reports every cached object whose JSON changed; call it once the engine has stopped.
func (c *cacheCheck) verify(t *testing.T) {
	t.Helper()
	if changed := c.changed(); len(changed) > 0 {
		t.Errorf("%d of %d cached objects changed after they entered the cache; the first:\n%s", len(changed), c.size(), changed[0])
	}
}

// changed describes each cached object whose JSON is not what it was when it entered.
func (c *cacheCheck) changed() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for u, before := range c.entered {
		after, err := json.Marshal(u.Object)
		if err != nil || !bytes.Equal(before, after) {
			out = append(out, fmt.Sprintf("entered %s\nnow     %s (%v)", before, after, err))
		}
	}
	return out
}

// The check sees a change made to a shared subtree through another object.
func TestCacheCheckSeesAChangedSubtree(t *testing.T) {
	t.Parallel()
	shared := map[string]any{"app": "web"}
	a := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "a", "labels": shared}}}
	b := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "b", "labels": shared}}}
	c := newCacheCheck()
	c.record(a)
	c.record(b)
	if got := c.changed(); len(got) != 0 {
		t.Fatalf("changes before any: %v", got)
	}
	shared["app"] = "db" // through a, say
	if got := c.changed(); len(got) != 2 {
		t.Fatalf("%d changed objects, want both sharing the subtree", len(got))
	}
}

// size is how many cached objects were checked.
func (c *cacheCheck) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entered)
}
