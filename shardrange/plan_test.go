package shardrange_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jsinformer/jsinformer/sharding"
	"github.com/jsinformer/jsinformer/shardrange"
)

// nameSet is a set of namespace names the plans are measured on.
type nameSet struct {
	name  string
	names []string
}

// nameSets: names that differ in their last characters (which FNV-1a spreads badly), and
// realistic team-environment names, as bench/shardcacheseed_test.go builds them.
func nameSets() []nameSet {
	var team, tenant, realistic []string
	for i := range 400 {
		team = append(team, fmt.Sprintf("team-%03d", i))
	}
	for i := range 200 {
		tenant = append(tenant, fmt.Sprintf("tenant-%d", i))
	}
	teams := []string{"payments", "search", "checkout", "identity", "catalog", "ads", "mobile",
		"billing", "fraud", "risk", "growth", "platform", "data-eng", "ml-serving", "infra", "security",
		"support", "notifications", "messaging", "media", "maps", "pricing", "inventory", "shipping", "reviews"}
	for _, env := range []string{"prod", "staging", "dev", "qa", "canary", "perf", "sandbox", "preview"} {
		for _, t := range teams {
			realistic = append(realistic, t+"-"+env)
		}
	}
	return []nameSet{{"team-%03d", team}, {"tenant-%d", tenant}, {"teams×envs", realistic}}
}

// ringOf is the ring of members m0 … m(n-1).
func ringOf(n int) sharding.Ring {
	var ids []string
	for i := range n {
		ids = append(ids, fmt.Sprintf("m%d", i))
	}
	return sharding.NewRing(ids...)
}

// planFigures is what checkPlan measured of a plan.
type planFigures struct {
	largest, fair     int // the largest member's namespaces, ⌈n/N⌉
	fewest, most      int // slices per member
	clauses           int // the longest selector's shardRange clauses
	heaviest, members int
}

func (f planFigures) String() string {
	return fmt.Sprintf("N=%d: largest %d namespaces (fair %d, heaviest slice %d), slices %d..%d, up to %d clauses",
		f.members, f.largest, f.fair, f.heaviest, f.fewest, f.most, f.clauses)
}

// checkPlan fails unless every slice of p has exactly one owner in its ring, no member holds
// more than ⌈n/N⌉ + heaviest − 1 of names, and slice counts differ by at most 1 unless the
// member with the most slices has none of weight 0 to give.
func checkPlan(t *testing.T, p *shardrange.Plan, names []string) planFigures {
	t.Helper()
	ring := p.Ring()
	f := planFigures{members: len(ring), fair: (len(names) + len(ring) - 1) / len(ring), fewest: shardrange.Slices}
	var weights [shardrange.Slices]int
	for _, ns := range names {
		weights[p.Layout().SliceOf(shardrange.Hash(ns))]++
	}
	f.heaviest = slices.Max(weights[:])
	var union shardrange.Mask
	counts := map[string]int{}
	for _, m := range ring {
		part := p.Partition(m, shardrange.Namespace)
		if part.Mask.Or(union).Count() != union.Count()+part.Mask.Count() {
			t.Fatalf("%s's slices overlap another member's", m)
		}
		union = union.Or(part.Mask)
		load := 0
		for _, ns := range names {
			if part.Contains(shardrange.Hash(ns)) {
				load++
			}
		}
		counts[m] = part.Count()
		f.largest, f.fewest, f.most = max(f.largest, load), min(f.fewest, part.Count()), max(f.most, part.Count())
		f.clauses = max(f.clauses, len(part.Ranges()))
	}
	if union != shardrange.All {
		t.Fatalf("%d of %d slices have an owner", union.Count(), shardrange.Slices)
	}
	if bound := f.fair + max(f.heaviest-1, 0); f.largest > bound {
		t.Errorf("%s: the largest member holds %d namespaces, above the bound %d", f, f.largest, bound)
	}
	if f.most-f.fewest > 1 {
		for i := range shardrange.Slices {
			if o := p.Owner(i); weights[i] == 0 && counts[o] == f.most {
				t.Errorf("%s: %s holds %d slices (the most) and slice %d holds no namespace", f, o, f.most, i)
				break
			}
		}
	}
	return f
}

// TestPlanBalancesNamespaces: fresh plans for 1 to 8 members hold the largest member within
// the bound and even out slice counts.
func TestPlanBalancesNamespaces(t *testing.T) {
	t.Parallel()
	for _, set := range nameSets() {
		t.Run(set.name, func(t *testing.T) {
			t.Parallel()
			for n := 1; n <= 8; n++ {
				f := checkPlan(t, shardrange.NewPlan(ringOf(n), set.names, nil), set.names)
				t.Logf("%s of %d: %s", set.name, len(set.names), f)
			}
		})
	}
}

// ownerOf is the member of p owning namespace ns.
func ownerOf(p *shardrange.Plan, ns string) string {
	o, _ := p.KeyOwner(ns + "/x")
	return o
}

// TestPlanMovesLittle: a member joining N → N+1 takes about ⌈n/(N+1)⌉ namespaces and
// nothing moves between the others; a member leaving moves only its namespaces.
func TestPlanMovesLittle(t *testing.T) {
	t.Parallel()
	for _, set := range nameSets() {
		t.Run(set.name, func(t *testing.T) {
			t.Parallel()
			n := len(set.names)
			for members := 1; members <= 7; members++ {
				before := shardrange.NewPlan(ringOf(members), set.names, nil)
				joined := shardrange.NewPlan(ringOf(members+1), set.names, before)
				checkPlan(t, joined, set.names)
				newcomer := fmt.Sprintf("m%d", members)
				moved := shardrange.Moved(before, joined, set.names)
				if want := (n+members)/(members+1) + members; moved > want {
					t.Errorf("N=%d→%d: %d namespaces moved, want at most %d", members, members+1, moved, want)
				}
				for _, ns := range set.names {
					if a, b := ownerOf(before, ns), ownerOf(joined, ns); a != b && b != newcomer {
						t.Fatalf("N=%d→%d: %s moved from %s to %s, not to the newcomer", members, members+1, ns, a, b)
					}
				}
				gone := fmt.Sprintf("m%d", members/2)
				left := shardrange.NewPlan(slices.DeleteFunc(slices.Clone(joined.Ring()), func(m string) bool { return m == gone }), set.names, joined)
				checkPlan(t, left, set.names)
				for _, ns := range set.names {
					if a, b := ownerOf(joined, ns), ownerOf(left, ns); a != b && a != gone {
						t.Fatalf("N=%d→%d: %s moved from %s to %s though %s left", members+1, members, ns, a, b, gone)
					}
				}
				for i := range shardrange.Slices {
					if a, b := joined.Owner(i), left.Owner(i); a != b && a != gone {
						t.Errorf("N=%d→%d: slice %d moved from %s to %s though %s left", members+1, members, i, a, b, gone)
					}
				}
				t.Logf("%s: N=%d→%d moved %d of %d namespaces (fair share %d); %s leaving moved %d",
					set.name, members, members+1, moved, n, (n+members)/(members+1), gone, shardrange.Moved(joined, left, set.names))
			}
		})
	}
}

// TestPlanIsDeterministic: the plan depends on the set of namespaces only, and a plan
// recomputed from itself is itself.
func TestPlanIsDeterministic(t *testing.T) {
	t.Parallel()
	for _, set := range nameSets() {
		shuffled := slices.Clone(set.names)
		rand.New(rand.NewPCG(3, 4)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		shuffled = append(shuffled, set.names[:17]...)
		for members := 1; members <= 6; members++ {
			p := shardrange.NewPlan(ringOf(members), set.names, nil)
			if q := shardrange.NewPlan(ringOf(members), shuffled, nil); !q.Equal(p) {
				t.Errorf("%s, N=%d: the plan depends on the namespaces' order or repetitions", set.name, members)
			}
			if q := shardrange.NewPlan(ringOf(members), set.names, p); !q.Equal(p) {
				t.Errorf("%s, N=%d: the plan recomputed from itself differs (%d namespaces moved)", set.name, members, shardrange.Moved(p, q, set.names))
			}
		}
	}
}

// TestPlanFromAnotherRing: a prev plan of a ring that lost one member and gained two still
// gives a balanced plan; the survivors keep what balance lets them keep.
func TestPlanFromAnotherRing(t *testing.T) {
	t.Parallel()
	for _, set := range nameSets() {
		prev := shardrange.NewPlan(sharding.NewRing("a", "b", "c"), set.names, nil)
		p := shardrange.NewPlan(sharding.NewRing("b", "c", "d", "e"), set.names, prev)
		f := checkPlan(t, p, set.names)
		n, moved := len(set.names), shardrange.Moved(prev, p, set.names)
		// a's third moves, and b and c each give up a third minus a quarter.
		if want := n/3 + 2*(n/3-n/4) + 8; moved > want {
			t.Errorf("%s: %d of %d namespaces moved, want at most %d", set.name, moved, n, want)
		}
		t.Logf("%s: {a,b,c} → {b,c,d,e}: %s; %d of %d namespaces moved", set.name, f, moved, n)
	}
}

// TestPlanRecutsALayoutThatNoLongerSpreads: prev's layout is kept while it spreads the
// namespaces (a few added move a few); cut again when one slice holds too many, and the new
// slices go to the prev owners of their namespaces where balance allows.
func TestPlanRecutsALayoutThatNoLongerSpreads(t *testing.T) {
	t.Parallel()
	team := nameSets()[0].names
	ring := ringOf(4)
	var most []string // 3 in 4, spread over the pattern
	for i, ns := range team {
		if i%4 != 0 {
			most = append(most, ns)
		}
	}
	prev := shardrange.NewPlan(ring, most, nil)
	kept := shardrange.NewPlan(ring, team, prev)
	if kept.Layout() != prev.Layout() {
		t.Error("300 → 400 names of one pattern: the layout was cut again")
	}
	checkPlan(t, kept, team)
	if moved := shardrange.Moved(prev, kept, most); moved > 300/4/4 {
		t.Errorf("300 → 400 names: %d of the 300 moved", moved)
	}
	small := shardrange.NewPlan(ring, team[:40], nil)
	recut := shardrange.NewPlan(ring, team, small)
	if recut.Layout() != shardrange.QuantileLayout(team) {
		t.Error("40 → 400 names: the layout of 40 was kept")
	}
	checkPlan(t, recut, team)
	moved := shardrange.Moved(small, recut, team[:40])
	if moved > 40/2 {
		t.Errorf("40 → 400 names: %d of the 40 first moved", moved)
	}
	t.Logf("300 → 400 names: %d of 300 moved (layout kept); 40 → 400: %d of 40 moved (cut again)",
		shardrange.Moved(prev, kept, most), moved)
	if l := shardrange.NewPlan(ring, nil, nil).Layout(); !l.IsZero() {
		t.Error("no namespaces: the layout is not equal slices")
	}
}

// TestPlanKeyOwnerAgreesWithPartition: the owner of an object's key (by namespace, and its
// UIDKey) is the member whose partition keeps the object; other keys are not placed.
func TestPlanKeyOwnerAgreesWithPartition(t *testing.T) {
	t.Parallel()
	names := nameSets()[2].names
	rng := rand.New(rand.NewPCG(5, 6))
	for members := 1; members <= 5; members++ {
		p := shardrange.NewPlan(ringOf(members), names, nil)
		for _, ns := range names {
			u := &unstructured.Unstructured{}
			u.SetNamespace(ns)
			u.SetName("obj")
			u.SetUID(types.UID(fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rng.Uint32(), rng.Uint32()&0xffff, rng.Uint32()&0xfff, rng.Uint32()&0xfff, rng.Uint64()&0xffffffffffff)))
			byNS, _ := p.KeyOwner(ns + "/obj")
			byUID, _ := p.KeyOwner(shardrange.UIDKey(string(u.GetUID())))
			for _, m := range p.Ring() {
				if keeps := p.Partition(m, shardrange.Namespace).KeepsObject(u); keeps != (byNS == m) {
					t.Fatalf("N=%d: key %s/obj owned by %s; %s's namespace partition keeps it: %v", members, ns, byNS, m, keeps)
				}
				if keeps := p.Partition(m, shardrange.UID).KeepsObject(u); keeps != (byUID == m) {
					t.Fatalf("N=%d: uid %s owned by %s; %s's uid partition keeps it: %v", members, u.GetUID(), byUID, m, keeps)
				}
			}
		}
		for _, key := range []string{"cluster-object", "schedule:team/a.js#0", "metric:team/b.js#family"} {
			if o, ok := p.KeyOwner(key); ok {
				t.Errorf("KeyOwner(%q) = %q, want no placement", key, o)
			}
		}
		if part := p.Partition("stranger", shardrange.Namespace); part.Mask != (shardrange.Mask{}) {
			t.Errorf("a member not in the ring owns %s", part)
		}
	}
	if o, ok := shardrange.NewPlan(nil, names, nil).KeyOwner("payments-prod/x"); ok {
		t.Errorf("an empty ring places a key on %q", o)
	}
}

// TestPlanHoldsUnderChurn: through random joins, leaves and namespaces coming and going,
// each plan holds the bound and the slice counts, and recomputing it changes nothing.
func TestPlanHoldsUnderChurn(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	members := map[string]bool{"m0": true, "m1": true, "m2": true}
	present := map[string]bool{}
	var p *shardrange.Plan
	clauses, moved := 0, 0
	for step := range 200 {
		switch r := rng.IntN(10); {
		case r == 0 && len(members) < 9:
			members[fmt.Sprintf("m%d", rng.IntN(12))] = true
		case r == 1 && len(members) > 1:
			delete(members, fmt.Sprintf("m%d", rng.IntN(12)))
		default:
			for range rng.IntN(40) {
				ns := fmt.Sprintf("ns-%d", rng.IntN(600))
				present[ns] = !present[ns]
			}
		}
		var ids, names []string
		for m := range members {
			ids = append(ids, m)
		}
		for ns, ok := range present {
			if ok {
				names = append(names, ns)
			}
		}
		next := shardrange.NewPlan(sharding.NewRing(ids...), names, p)
		clauses = max(clauses, checkPlan(t, next, names).clauses)
		if p != nil {
			moved += shardrange.Moved(p, next, names)
		}
		if again := shardrange.NewPlan(next.Ring(), names, next); !again.Equal(next) {
			t.Fatalf("step %d: recomputing the plan moved %d namespaces", step, shardrange.Moved(next, again, names))
		}
		p = next
	}
	t.Logf("200 steps: %d namespaces moved in all; the longest selector had %d clauses", moved, clauses)
}
