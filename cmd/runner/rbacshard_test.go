package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/sharding"
	"github.com/jsinformer/jsinformer/shardrange"
)

// TestGeneratedRBACCoversShardCache: `runner rbac --sharded --shard-cache` grants what a
// partitioned replica needs. Started under exactly that ServiceAccount, the replica's
// permission check finds nothing missing, and the plan it writes for its ring was made from
// the namespaces (a layout cut at their hashes: a replica refused the namespaces plans equal
// slices).
func TestGeneratedRBACCoversShardCache(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	admin := kubernetes.NewForConfigOrDie(cp.Config)
	suffix := fmt.Sprint(time.Now().UnixNano() % 1e8)
	sa, ring := "runner-"+suffix, "jsinformer-"+suffix
	const own = "default" // the runner's namespace (podNamespace) outside a pod
	dir := t.TempDir()
	script := `export default { watch: { resource: "v1/configmaps", labelSelector: "rbac-shard=` + suffix + `" }, onAdd() {} };`
	if err := os.WriteFile(filepath.Join(dir, "s.js"), []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	file, stderr, err := executeSplit(t, "rbac", "--scripts", dir, "--service-account", own+"/"+sa,
		"--sharded", "--shard-cache", "--leader-elect-resource-name", ring)
	if err != nil {
		t.Fatalf("runner rbac: %v\n%s", err, stderr)
	}
	serverSideApply(t, cp.Config, decodeObjects(t, file))

	e, logs := startShardedUnder(t, serviceAccountREST(t, cp.Config, own, sa), dir, &engine.LeaderElection{
		Namespace: own, Name: ring, Identity: "rbac-" + suffix,
		LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond})
	pollFor(t, "the permission check to answer every need", logs, e.PermissionsChecked)
	if missing, refused := e.Permissions(); len(missing) != 0 || len(refused) != 0 {
		t.Errorf("under the generated RBAC the replica lacks %v and was refused %v\n%s", missing, refused, logs)
	}
	leases := sharding.APILeases{Client: admin.CoordinationV1(), Namespace: own, Ring: ring}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		err := planCutAtNamespaces(t.Context(), leases)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ring's plan: %v\n%s", err, logs)
		}
	}
}

// planCutAtNamespaces reads the plan of the ring of leases and says why it is not one cut at
// the namespaces' hashes.
func planCutAtNamespaces(ctx context.Context, leases sharding.APILeases) error {
	view, err := leases.Plan(ctx)
	if err != nil {
		return err
	}
	plan, err := shardrange.DecodePlan(view.Plan)
	if err != nil {
		return err
	}
	if plan.Layout() == (shardrange.Layout{}) {
		return errors.New("the plan cuts equal slices: made without the namespaces")
	}
	return nil
}

// startShardedUnder runs an engine with --sharded --shard-cache as cfg's identity on dir until
// the test ends.
func startShardedUnder(t *testing.T, cfg *rest.Config, dir string, shard *engine.LeaderElection) (*engine.Engine, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	o := &options{}
	cmd := &cobra.Command{}
	ctx, cancel := context.WithCancel(context.Background())
	cmd.SetContext(ctx)
	e, h, err := o.newEngine(cmd, engine.Config{RESTConfig: cfg, ScriptsDir: dir, Logger: slog.New(slog.NewTextHandler(logs, nil)),
		HandlerTimeout: 2 * time.Second, Debounce: 20 * time.Millisecond, PermissionCheckInterval: 200 * time.Millisecond,
		Sharding: shard, ShardCache: true})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- h.runEngine(ctx, e) }() // owned by the test: cancelled and joined by its cleanup
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("engine Run: %v", err)
		}
		h.stop()
	})
	return e, logs
}
