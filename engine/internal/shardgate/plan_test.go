package shardgate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/jsinformer/jsinformer/sharding"
	"github.com/jsinformer/jsinformer/shardrange"
)

// namespacesClient is a fake clientset holding n namespaces named team-000 … (names that
// differ only at their end: equal slices would put them on one or two of 4 members).
func namespacesClient(n int) (*fake.Clientset, []string) {
	var objs []runtime.Object
	var names []string
	for i := range n {
		name := fmt.Sprintf("team-%03d", i)
		names = append(names, name)
		objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	}
	return fake.NewClientset(objs...), names
}

// The planner plans the ring from every namespace listed: each of 4 members owns about a
// quarter of them, and the Placer places a key "ns/name" on the member whose partition holds
// ns. A listing refused as forbidden still yields a plan (the ring must move); another error
// is returned, to be tried again.
func TestPlannerSpreadsTheListedNamespaces(t *testing.T) {
	t.Parallel()
	client, names := namespacesClient(400)
	ring := sharding.NewRing("a", "b", "c", "d")
	encoded, err := Planner(Namespaces(client), slog.New(slog.DiscardHandler))(t.Context(), ring, "")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := shardrange.DecodePlan(encoded)
	if err != nil {
		t.Fatal(err)
	}
	place, err := Placer(ring, encoded)
	if err != nil {
		t.Fatal(err)
	}
	share := map[string]int{}
	for _, ns := range names {
		owner := place(ns + "/x")
		share[owner]++
		if !plan.Partition(owner, shardrange.Namespace).Keeps(map[string]any{"metadata": map[string]any{"namespace": ns}}) {
			t.Fatalf("%s/x is placed on %s, whose partition does not hold %s", ns, owner, ns)
		}
	}
	for _, m := range ring {
		if share[m] < 95 || share[m] > 105 {
			t.Errorf("member %s owns %d of the 400 namespaces, want about 100: %v", m, share[m], share)
		}
	}
	if owner := place("cluster-scoped-name"); owner != ring.Owner("cluster-scoped-name") {
		t.Errorf("a key without a namespace is placed on %s, want its rendezvous owner %s", owner, ring.Owner("cluster-scoped-name"))
	}

	forbidden, _ := namespacesClient(1)
	forbidden.PrependReactor("list", "namespaces", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "", errors.New("no"))
	})
	if encoded, err := Planner(Namespaces(forbidden), slog.New(slog.DiscardHandler))(t.Context(), ring, ""); err != nil {
		t.Errorf("a forbidden listing failed the plan: %v", err)
	} else if _, err := Placer(ring, encoded); err != nil {
		t.Errorf("the plan made without namespaces is refused: %v", err)
	}
	broken, _ := namespacesClient(1)
	broken.PrependReactor("list", "namespaces", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("down")
	})
	if _, err := Planner(Namespaces(broken), slog.New(slog.DiscardHandler))(t.Context(), ring, ""); err == nil {
		t.Error("an unavailable API server gave a plan without its namespaces, want an error to retry")
	}
}

// The Placer refuses what a stranger with write access to the Leases could write: a plan for
// other members, and text that is no plan.
func TestPlacerRefusesForeignPlans(t *testing.T) {
	t.Parallel()
	other := shardrange.NewPlan(sharding.NewRing("x", "y"), nil, nil).Encode()
	for _, plan := range []string{other, "", "garbage", "v1;;;"} {
		if _, err := Placer(sharding.NewRing("a", "b"), plan); err == nil {
			t.Errorf("plan %.40q accepted for ring {a, b}", plan)
		}
	}
}

// Asked again for the ring its plan is for, the planner keeps a plan that still spreads the
// namespaces (no move), and plans anew once namespaces created since pile up on one member.
func TestPlannerKeepsABalancedPlan(t *testing.T) {
	t.Parallel()
	ring := sharding.NewRing("a", "b", "c")
	names := []string{}
	for i := range 300 {
		names = append(names, fmt.Sprintf("ns-%03d", i))
	}
	list := func(ns []string) func(context.Context) ([]string, error) {
		return func(context.Context) ([]string, error) { return ns, nil }
	}
	planner := Planner(list(names), slog.New(slog.DiscardHandler))
	first, err := planner(t.Context(), ring, "")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := planner(t.Context(), ring, first); err != nil || again != first {
		t.Fatalf("asked again with the same namespaces the planner changed its plan (err %v)", err)
	}
	plan, err := shardrange.DecodePlan(first)
	if err != nil {
		t.Fatal(err)
	}
	grown := slices.Clone(names)
	for i := 0; len(grown) < 400; i++ { // 100 more, every one on a's slices
		if ns := fmt.Sprintf("new-%d", i); mustOwner(t, plan, ns) == "a" {
			grown = append(grown, ns)
		}
	}
	replanned, err := Planner(list(grown), slog.New(slog.DiscardHandler))(t.Context(), ring, first)
	if err != nil {
		t.Fatal(err)
	}
	if replanned == first {
		t.Fatal("the planner kept a plan that gives a 200 of 400 namespaces")
	}
	after, err := shardrange.DecodePlan(replanned)
	if err != nil {
		t.Fatal(err)
	}
	share := map[string]int{}
	for _, ns := range grown {
		share[mustOwner(t, after, ns)]++
	}
	for _, m := range ring {
		if share[m] > 140 {
			t.Errorf("after planning again %s owns %d of 400 namespaces: %v", m, share[m], share)
		}
	}
}

func mustOwner(t *testing.T, plan *shardrange.Plan, ns string) string {
	t.Helper()
	owner, ok := plan.KeyOwner(ns + "/x")
	if !ok {
		t.Fatalf("no owner for namespace %s", ns)
	}
	return owner
}
