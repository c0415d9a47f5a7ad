package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/engine/internal/shardgate"
	"github.com/jsinformer/jsinformer/sharding"
	"github.com/jsinformer/jsinformer/shardrange"
)

// The plan partitioned caches follow is made by the ring's lowest member from the namespaces
// that exist then (shardrange.Plan), so the tests read it from the Leases once the ring has
// formed, and pick or look up their namespaces' owners in it.

// waitPlan waits until the ring "ring" of the Leases in namespace leases has exactly members,
// with the plan its lowest member made for it, and returns that plan.
func waitPlan(t *testing.T, cfg *rest.Config, leases string, members ...string) *shardrange.Plan {
	t.Helper()
	store := sharding.APILeases{Client: kubernetes.NewForConfigOrDie(cfg).CoordinationV1(), Namespace: leases, Ring: "ring"}
	want := sharding.NewRing(members...)
	var plan *shardrange.Plan
	eventuallyWithin(t, 30*time.Second, fmt.Sprintf("the plan of ring %v", want), func() error {
		view, err := store.Plan(t.Context())
		if err != nil {
			return err
		}
		if !view.Ring.Equal(want) {
			return fmt.Errorf("the Leases name ring %v", view.Ring)
		}
		plan, err = shardrange.DecodePlan(view.Plan)
		return err
	})
	return plan
}

// nsOwner is the member of plan whose partition holds namespace ns.
func nsOwner(plan *shardrange.Plan, ns string) string {
	owner, _ := plan.KeyOwner(ns + "/x")
	return owner
}

// uidOwner is the member of plan whose uid partition holds uid.
func uidOwner(plan *shardrange.Plan, uid string) string {
	owner, _ := plan.KeyOwner(shardrange.UIDKey(uid))
	return owner
}

// spreadNamespaces returns per namespace names for each member of plan, owned by it, named
// from base.
func spreadNamespaces(plan *shardrange.Plan, base string, per int) []string {
	count := map[string]int{}
	var out []string
	for i := 0; len(out) < per*len(plan.Ring()); i++ {
		ns := fmt.Sprintf("n%d-%s", i, base)
		if owner := nsOwner(plan, ns); count[owner] < per {
			count[owner]++
			out = append(out, ns)
		}
	}
	return out
}

// owned returns the namespaces of namespaces that plan gives member.
func owned(plan *shardrange.Plan, member string, namespaces []string) []string {
	var out []string
	for _, ns := range namespaces {
		if nsOwner(plan, ns) == member {
			out = append(out, ns)
		}
	}
	return out
}

// bareMember runs a member id of ring "ring" with Leases in namespace leases that handles no
// key and caches nothing, until the test ends. With listed, it records its caches listed for
// every ring it moves to (it has none to list), so that the others hand it its keys; else the
// test calls SetListed.
func bareMember(t *testing.T, cfg *rest.Config, leases, id string, listed bool) *sharding.Member {
	client := kubernetes.NewForConfigOrDie(cfg)
	m := sharding.New(sharding.Config{Name: "ring", Identity: id, LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second,
		RetryPeriod: 500 * time.Millisecond, DrainTimeout: time.Second, AwaitListed: true,
		Planner: shardgate.Planner(shardgate.Namespaces(client), slog.New(slog.DiscardHandler)), Placer: shardgate.Placer},
		sharding.APILeases{Client: client.CoordinationV1(), Namespace: leases, Ring: "ring"}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { // owned by the test: cancelled and joined by its cleanup
		defer func() { done <- struct{}{} }()
		m.Run(ctx)
	}()
	go func() { // the same
		defer func() { done <- struct{}{} }()
		for listed {
			select {
			case <-ctx.Done():
				return
			case <-m.Targets():
				m.SetListed(m.Target().Fingerprint())
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done; <-done })
	return m
}
