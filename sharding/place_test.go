package sharding

import (
	"strings"
	"testing"
	"time"
)

// TestPlacedKeysMoveTogether: with Config.Placer, the keys of one ring key (here a namespace)
// belong to one member, are gained together, and still never have two handlers while
// members come and go.
func TestPlacedKeysMoveTogether(t *testing.T) {
	t.Parallel()
	r := newTestRing(t, 140)
	r.placer = func(ring Ring, _ string) (func(string) string, error) {
		return func(key string) string {
			ns, _, _ := strings.Cut(key, "/")
			return ring.Owner("slice/" + ns)
		}, nil
	}
	together := func() {
		t.Helper()
		owner := map[string]string{}
		for _, k := range r.keys {
			ns, _, _ := strings.Cut(k, "/")
			for id, m := range r.members {
				if !m.Handles(k) {
					continue
				}
				if prev, ok := owner[ns]; ok && prev != id {
					t.Fatalf("namespace %s handled by %s and %s", ns, prev, id)
				}
				owner[ns] = id
			}
		}
	}
	r.join("a")
	r.settle(5 * time.Second)
	b := r.join("b")
	r.join("c")
	r.settle(5 * time.Second)
	together()
	for _, g := range b.TakeGains() {
		gained := map[string]bool{}
		for _, k := range r.keys {
			ns, _, _ := strings.Cut(k, "/")
			if prev, ok := gained[ns]; ok && prev != g.Has(k) {
				t.Fatalf("gain %d has some keys of namespace %s and not others", g.Generation, ns)
			}
			gained[ns] = g.Has(k)
		}
	}
	if b.Owner("ns-3/object-3") != b.Owner("ns-3/another") {
		t.Error("two keys of one namespace have different owners")
	}
	r.leave("c")
	r.settle(5 * time.Second)
	together()
}
