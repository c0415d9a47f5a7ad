package deploy_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/sharding"
)

// renderSharded renders the base with the deploy/sharded component, as docs/sharding.md shows,
// moved into ns with every name suffixed.
func renderSharded(t *testing.T, ns, suffix string) []*unstructured.Unstructured {
	t.Helper()
	fsys := baseFS(t)
	kustomization := fmt.Sprintf("resources: [../deploy]\ncomponents: [../deploy/sharded]\nnamespace: %q\nnameSuffix: %q\n", ns, "-"+suffix)
	if err := fsys.WriteFile("/overlay/kustomization.yaml", []byte(kustomization)); err != nil {
		t.Fatal(err)
	}
	return render(t, fsys, "/overlay")
}

// The sharded overlay runs three --sharded replicas, on different nodes when it can, lets
// drains take one at a time, and grants what a ring member does with Leases.
func TestShardedOverlay(t *testing.T) {
	t.Parallel()
	objs := renderSharded(t, "ops", "x")
	var d appsv1.Deployment
	decode(t, find(t, objs, "Deployment"), &d)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
		t.Errorf("replicas = %v, want 3", d.Spec.Replicas)
	}
	args := d.Spec.Template.Spec.Containers[0].Args
	if !slices.Contains(args, "--sharded") || slices.Contains(args, "--leader-elect") ||
		!slices.Contains(args, "--leader-elect-resource-namespace=$(POD_NAMESPACE)") {
		t.Errorf("args %q: want --sharded with the Lease namespace, without --leader-elect", args)
	}
	aff := d.Spec.Template.Spec.Affinity
	if aff == nil || aff.PodAntiAffinity == nil || len(aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 ||
		aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.TopologyKey != "kubernetes.io/hostname" {
		t.Errorf("affinity %+v, want a preferred pod anti-affinity across hostnames", aff)
	}
	var pdb policyv1.PodDisruptionBudget
	decode(t, find(t, objs, "PodDisruptionBudget"), &pdb)
	if pdb.Spec.MinAvailable != nil || pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("PDB minAvailable %v maxUnavailable %v, want maxUnavailable 1 only", pdb.Spec.MinAvailable, pdb.Spec.MaxUnavailable)
	}
	var found bool
	for _, o := range objs {
		if o.GetKind() != "Role" || o.GetName() != "jsinformer-sharding-x" {
			continue
		}
		found = true
		var role rbacv1.Role
		decode(t, o, &role)
		want := rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
			Verbs: []string{"get", "list", "create", "update", "delete"}}
		if len(role.Rules) != 1 || !equalRule(role.Rules[0], want) {
			t.Errorf("sharding Role rules %+v, want %+v", role.Rules, want)
		}
	}
	if !found {
		t.Error("no Role jsinformer-sharding rendered")
	}
}

// The overlay's RBAC, created for real, lets sharded replicas signed in as its ServiceAccount
// join a ring, renew, and release their Leases.
func TestShardedPermissions(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	suffix := uniqueSuffix(t)
	ns := "deploy-shard-" + suffix
	objs := renderSharded(t, ns, suffix)
	admin := newCluster(t, cp.Config)
	admin.createNamespace(t, objs)
	for _, o := range objs {
		if !slices.Contains(rbacKinds, o.GetKind()) {
			continue
		}
		if err := admin.create(t, o, false); err != nil {
			t.Fatalf("create %s %s: %v", o.GetKind(), o.GetName(), err)
		}
		if o.GetNamespace() == "" {
			t.Cleanup(func() { _ = admin.resource(t, o).Delete(context.Background(), o.GetName(), metav1.DeleteOptions{}) })
		}
	}
	sa := serviceAccountConfig(t, cp.Config, ns, "jsinformer-"+suffix)
	a, b := startMember(t, sa, ns, "a"), startMember(t, sa, ns, "b")
	waitShard(t, a, 2)
	waitShard(t, b, 2)
	b.stop(t) // releases its Lease: a delete
	waitShard(t, a, 1)
	leases, err := kubernetes.NewForConfigOrDie(cp.Config).CoordinationV1().Leases(ns).List(t.Context(), metav1.ListOptions{LabelSelector: sharding.RingLabel})
	if err != nil {
		t.Fatal(err)
	}
	if len(leases.Items) != 1 || *leases.Items[0].Spec.HolderIdentity != "a" {
		t.Errorf("%d shard Leases left, want a's only", len(leases.Items))
	}
	a.stop(t)
}

type member struct {
	e      *engine.Engine
	cancel context.CancelFunc
	done   chan error
}

func startMember(t *testing.T, cfg *rest.Config, ns, id string) *member {
	t.Helper()
	logs := &syncBuffer{}
	e, err := engine.New(engine.Config{RESTConfig: cfg, ScriptsDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(logs, nil)),
		Sharding: &engine.LeaderElection{Namespace: ns, Name: "jsinformer", Identity: id,
			LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &member{e: e, cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- e.Run(ctx) }()
	t.Cleanup(func() {
		m.cancel()
		if err := <-m.done; err != nil {
			t.Errorf("%s: Run: %v\n%s", id, err, logs.String())
		}
		m.done <- nil // for a later stop
	})
	return m
}

func (m *member) stop(t *testing.T) {
	t.Helper()
	m.cancel()
	if err := <-m.done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	m.done <- nil
}

func waitShard(t *testing.T, m *member, members int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := m.e.Status().Shard
		if st != nil && st.Valid && !st.Pending && len(st.Members) == members {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("shard status %+v, want a settled ring of %d", st, members)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
