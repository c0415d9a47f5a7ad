package main

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/permissions"
	"github.com/jsinformer/jsinformer/sharding"
	"github.com/jsinformer/jsinformer/shardrange"
)

// Under --shard-cache the ring's lowest replica plans each ring (shardrange.Plan) from the
// namespaces that exist then, so the tests read the plan from the Leases once the ring has
// formed, and pick their namespaces, or look up their objects' owners, by it.

// waitPlan waits until se's Leases name exactly the ring of members, with the plan its lowest
// member wrote for it, and returns that plan. A killed replica's Lease counts until the
// others delete it as expired (two lease durations).
func (se *shardEnv) waitPlan(t *testing.T, members ...string) *shardrange.Plan {
	t.Helper()
	store := sharding.APILeases{Client: kubernetes.NewForConfigOrDie(se.cp.Config).CoordinationV1(), Namespace: se.ns,
		Ring: permissions.DefaultLeaseName}
	want := sharding.NewRing(members...)
	deadline := time.Now().Add(60 * time.Second)
	for {
		view, err := store.Plan(t.Context())
		if err == nil && !view.Ring.Equal(want) {
			err = fmt.Errorf("the Leases name ring %v", view.Ring)
		}
		if err == nil {
			plan, err := shardrange.DecodePlan(view.Plan)
			if err != nil {
				t.Fatalf("the plan of ring %v: %v", want, err)
			}
			return plan
		}
		if time.Now().After(deadline) {
			t.Fatalf("no plan of ring %v on the Leases within 60s: %v", want, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// nsOwner is the member of plan whose namespace partition holds namespace ns.
func nsOwner(plan *shardrange.Plan, ns string) string {
	owner, _ := plan.KeyOwner(ns + "/x")
	return owner
}

// uidOwner is the member of plan whose uid partition holds uid.
func uidOwner(plan *shardrange.Plan, uid string) string {
	owner, _ := plan.KeyOwner(shardrange.UIDKey(uid))
	return owner
}
