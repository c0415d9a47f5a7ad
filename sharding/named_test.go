package sharding

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// A key named while its owner was dead (its Lease not yet expired) is named by the gain of
// the member that takes it, and by no other; one named longer ago than the window is not.
func TestGainNamesTheKeysEventsNamed(t *testing.T) {
	t.Parallel()
	r := newTestRing(t, 300)
	a, b := r.join("a"), r.join("b")
	r.join("c")
	r.settle(5 * time.Second)
	var keys []string // c's, in the ring of a and b: the first a's, the second b's
	for _, want := range []string{"a", "b", "a"} {
		for _, k := range r.keys {
			if (Ring{"a", "b", "c"}).Owner(k) == "c" && (Ring{"a", "b"}).Owner(k) == want && !slices.Contains(keys, k) {
				keys = append(keys, k)
				break
			}
		}
	}
	old := keys[2]
	a.Accept(old)
	b.Accept(old)
	for named := r.clock.Now(); r.clock.Now().Sub(named) <= 2*tLease; {
		r.step() // past the window
	}
	a.TakeGains()
	b.TakeGains()
	r.kill("c")
	for _, m := range []*Member{a, b} {
		for _, k := range keys[:2] {
			if m.Accept(k) {
				t.Fatalf("%s accepts c's key %s while c's Lease is valid", m.Identity(), k)
			}
		}
	}
	r.settle(2 * tLease)
	for i, m := range []*Member{a, b} {
		var named []string
		for _, g := range m.TakeGains() {
			named = append(named, g.Named...)
		}
		if !slices.Equal(named, keys[i:i+1]) {
			t.Errorf("%s's gains name %v, want %v", m.Identity(), named, keys[i:i+1])
		}
	}
}

// The keys remembered are bounded; once the window has passed they are forgotten and new
// ones are remembered again.
func TestNamedKeysAreBounded(t *testing.T) {
	t.Parallel()
	r := newTestRing(t, 0)
	a := r.join("a")
	r.join("b")
	r.settle(5 * time.Second)
	refused := 0
	for i := 0; refused < maxNamed+100; i++ {
		if !a.Accept(fmt.Sprintf("ns/key-%d", i)) {
			refused++
		}
	}
	if n := len(a.named); n != maxNamed {
		t.Fatalf("%d keys remembered, want the bound %d", n, maxNamed)
	}
	for start := r.clock.Now(); r.clock.Now().Sub(start) <= a.namedWindow(); {
		r.step()
	}
	late := ""
	for i := 0; late == ""; i++ {
		if k := fmt.Sprintf("ns/late-%d", i); !a.Accept(k) {
			late = k
		}
	}
	if _, ok := a.named[late]; !ok || len(a.named) != 1 {
		t.Errorf("after the window, %d keys remembered (the late one: %v), want only the late one", len(a.named), ok)
	}
}
