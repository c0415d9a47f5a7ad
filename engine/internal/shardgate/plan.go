package shardgate

import (
	"context"
	"fmt"
	"log/slog"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/sharding"
	"github.com/jsinformer/jsinformer/shardrange"
)

// maxPlanNamespaces bounds the namespaces a plan is made from; past it the rest are left out
// of the layout (they are still cached and handled, in whatever slice they fall).
const maxPlanNamespaces = 200_000

// Planner makes each ring's plan (shardrange.NewPlan) from the namespaces' names, listed by
// the ring's lowest member, and the plan before it. Asked again for the ring its plan was made
// for (sharding.Config.Replan), it keeps that plan while it still spreads the namespaces
// (balanced): a new plan moves namespaces, and each move reloads partitioned scripts. A replica
// not allowed to list namespaces plans without them (equal slices, evened by count), so the
// ring still moves; other errors are returned and the member tries again on its next tick.
func Planner(namespaces func(context.Context) ([]string, error), logger *slog.Logger) sharding.Planner {
	return func(ctx context.Context, ring sharding.Ring, prev string) (string, error) {
		var before *shardrange.Plan
		if prev != "" {
			if p, err := shardrange.DecodePlan(prev); err == nil {
				before = p
			}
		}
		names, err := namespaces(ctx)
		if apierrors.IsForbidden(err) {
			logger.Warn("list namespaces forbidden: planning the ring without them, namespaces spread unevenly (runner rbac --shard-cache)",
				"error", err.Error())
		} else if err != nil {
			return "", err
		}
		if before != nil && before.Ring().Equal(ring) && balanced(before, names) {
			return prev, nil
		}
		return shardrange.NewPlan(ring, names, before).Encode(), nil
	}
}

// balanced reports whether no member of plan owns more than a tenth (and one namespace) over
// its fair share of names.
func balanced(plan *shardrange.Plan, names []string) bool {
	owned := map[string]int{}
	for _, ns := range names {
		owner, _ := plan.KeyOwner(ns + "/x")
		owned[owner]++
	}
	members := len(plan.Ring())
	fair := (len(names) + members - 1) / members
	for _, n := range owned {
		if n > fair+fair/10+1 {
			return false
		}
	}
	return true
}

// Namespaces lists the namespaces' names, a page at a time, at most maxPlanNamespaces.
func Namespaces(client kubernetes.Interface) func(context.Context) ([]string, error) {
	return func(ctx context.Context) ([]string, error) { return namespaceNames(ctx, client) }
}

func namespaceNames(ctx context.Context, client kubernetes.Interface) ([]string, error) {
	var names []string
	opts := metav1.ListOptions{Limit: 500}
	for {
		list, err := client.CoreV1().Namespaces().List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("list namespaces: %w", err)
		}
		for i := range list.Items {
			names = append(names, list.Items[i].Name)
		}
		if opts.Continue = list.Continue; opts.Continue == "" || len(names) >= maxPlanNamespaces {
			return names[:min(len(names), maxPlanNamespaces)], nil
		}
	}
}

// Placer places keys by a plan (shardrange.Plan.KeyOwner), and keys no slice holds (a
// cluster-scoped object's, a schedule's, a metric's) by rendezvous over the ring. A plan not
// made for ring is refused.
func Placer(ring sharding.Ring, plan string) (func(string) string, error) {
	p, err := shardrange.DecodePlan(plan)
	if err != nil {
		return nil, err
	}
	if !p.Ring().Equal(ring) {
		return nil, fmt.Errorf("place shard keys: the plan is for members %v, not %v", p.Ring(), ring)
	}
	return func(key string) string {
		if owner, ok := p.KeyOwner(key); ok {
			return owner
		}
		return ring.Owner(key)
	}, nil
}
