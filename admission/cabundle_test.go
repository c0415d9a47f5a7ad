package admission

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

func testCA(t *testing.T, name string, validity time.Duration) []byte {
	t.Helper()
	ca, err := newCA(name, time.Now(), validity)
	if err != nil {
		t.Fatal(err)
	}
	return ca.cert
}

// cas is the bundle's CAs in order, by the names given to them.
func cas(t *testing.T, bundle []byte, names map[string][]byte) []string {
	t.Helper()
	var out []string
	for rest := bundle; len(bytes.TrimSpace(rest)) > 0; {
		found := false
		for name, ca := range names {
			if bytes.HasPrefix(rest, ca) {
				out, rest, found = append(out, name), rest[len(ca):], true
				break
			}
		}
		if !found {
			t.Fatalf("bundle holds something else: %q", rest)
		}
	}
	return out
}

func same(a []string, b ...string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestCABundleMergeKeepsTheOldCAForTheGrace: a replica that wants the new CA adds it beside
// the old one, which stays until the new one has been there for the grace, whoever writes;
// a replica still on the old CA never removes the new one; the result is a fixed point (the
// same inputs write the same bytes, so a configuration is written once per change).
func TestCABundleMergeKeepsTheOldCAForTheGrace(t *testing.T) {
	t.Parallel()
	oldCA, newCA := testCA(t, "old", 24*time.Hour), testCA(t, "new", 24*time.Hour)
	names := map[string][]byte{"old": oldCA, "new": newCA}
	t0 := time.Now().Truncate(time.Second)
	grace := 2 * time.Minute
	merge := func(stored []byte, ann string, wanted []byte, at time.Time) ([]byte, string, time.Time) {
		return caMerge{stored: [][]byte{stored}, annotation: ann, wanted: wanted, now: at, grace: grace}.merge()
	}

	b0, a0, _ := merge(nil, "", oldCA, t0)
	if got := cas(t, b0, names); !same(got, "old") {
		t.Fatalf("first bundle %v", got)
	}
	// The Secret's CA changed: the replica serves the old one and wants the new one too.
	b1, a1, _ := merge(b0, a0, append(bytes.Clone(oldCA), newCA...), t0.Add(time.Minute))
	if got := cas(t, b1, names); !same(got, "old", "new") {
		t.Fatalf("bundle after the new CA %v, want old then new", got)
	}
	// The other replica, not having seen the new Secret yet, keeps both: no flapping.
	if b, a, _ := merge(b1, a1, oldCA, t0.Add(100*time.Minute)); !bytes.Equal(b, b1) || a != a1 {
		t.Errorf("a replica still on the old CA changed the bundle to %v", cas(t, b, names))
	}
	// Both serve the new CA: the old one stays until the grace has passed since the new one came.
	bIn, aIn, drop := merge(b1, a1, newCA, t0.Add(time.Minute+grace-time.Second))
	if !bytes.Equal(bIn, b1) || aIn != a1 {
		t.Errorf("within the grace the bundle changed to %v", cas(t, bIn, names))
	}
	if !drop.Equal(t0.Add(time.Minute + grace)) {
		t.Errorf("next drop at %v, want %v", drop, t0.Add(time.Minute+grace))
	}
	bAfter, aAfter, _ := merge(b1, a1, newCA, t0.Add(time.Minute+grace))
	if got := cas(t, bAfter, names); !same(got, "new") {
		t.Errorf("after the grace the bundle is %v, want new alone", got)
	}
	var added map[string]string
	if err := json.Unmarshal([]byte(aAfter), &added); err != nil || len(added) != 1 {
		t.Errorf("annotation after the grace %q (%v)", aAfter, err)
	}
	// Merging one's own output again changes nothing.
	if b, a, _ := merge(bAfter, aAfter, newCA, t0.Add(time.Hour)); !bytes.Equal(b, bAfter) || a != aAfter {
		t.Error("the merge is not a fixed point")
	}
	// Both added by one merge (a configuration created while the new CA was held): the old
	// one still goes after the grace.
	both, bothAdded, _ := merge(nil, "", append(bytes.Clone(oldCA), newCA...), t0)
	if got, _, _ := merge(both, bothAdded, newCA, t0.Add(grace)); !same(cas(t, got, names), "new") {
		t.Errorf("CAs added together: after the grace the bundle is %v, want new alone", cas(t, got, names))
	}
}

// TestCABundleMergeIsOrderIndependentAndDropsWhatIsNotACA: replicas merging the same CAs in
// another order write the same bytes; a CA nobody wants that expired, a block that is not a
// certificate and a configuration written before the annotation existed are handled.
func TestCABundleMergeIsOrderIndependentAndDropsWhatIsNotACA(t *testing.T) {
	t.Parallel()
	a, b := testCA(t, "a", time.Hour), testCA(t, "b", time.Hour)
	expired, err := newCA("expired", time.Now().Add(-3*time.Hour), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string][]byte{"a": a, "b": b, "expired": expired.cert}
	now := time.Now()
	m := caMerge{stored: [][]byte{expired.cert, []byte("-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n"), a},
		wanted: append(bytes.Clone(b), a...), now: now, grace: time.Minute}
	b1, ann1, _ := m.merge()
	m.stored, m.wanted = [][]byte{a, expired.cert}, append(bytes.Clone(a), b...)
	b2, ann2, _ := m.merge()
	if !bytes.Equal(b1, b2) || ann1 != ann2 {
		t.Errorf("the order of the inputs changed the result: %v / %v", cas(t, b1, names), cas(t, b2, names))
	}
	// a was stored without a recorded time: it counts as older than b, added now.
	if got := cas(t, b1, names); !same(got, "a", "b") {
		t.Errorf("bundle %v, want a then b, without the expired CA nor the broken block", got)
	}
	if got, _, _ := (caMerge{wanted: []byte("CA"), now: now}).merge(); string(got) != "CA" {
		t.Errorf("a bundle with no certificate to merge became %q", got)
	}
	if !bundleHas(b1, b) || bundleHas(b1, expired.cert) || bundleHas(b1, []byte("CA")) {
		t.Error("bundleHas")
	}
}
