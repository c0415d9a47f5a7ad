package engine_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/status"
)

// A replica that stops hands its namespaces over first: it keeps handling them, its Lease
// marked leaving, until the other replica has listed them, so an object deleted while it
// stops runs onDelete once, on one of the two. Without the hand-over the stopping replica
// would stop handling at once and the other, which observes the ring only at its next
// renewal (3 s here) and lists only then, would not see the deletion made once it moves.
func TestShardCacheLeaveHandsOver(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	base := fmt.Sprintf("slv%d", time.Now().UnixNano()%1e9)
	mk := &runner{dyn: dynamic.NewForConfigOrDie(cp.Config)}
	leases := mk.namespace(t, "lease-"+base)
	script := `export default {
  watch: { resource: "v1/configmaps", labelSelector: "sc=` + base + `" },
  onDelete(obj, ctx) { log.info("deleted", { name: obj.metadata.name }); },
};`
	replicas := map[string]*runner{}
	// a renews every 3 s, so it observes b's departure late; b renews every 500 ms and waits
	// up to its lease duration, 8 s, for the hand-over.
	for id, retry := range map[string]time.Duration{"a": 3 * time.Second, "b": 500 * time.Millisecond} {
		replicas[id] = startEngine(t, map[string]string{"s.js": script}, func(c *engine.Config) {
			c.Sharding = &engine.LeaderElection{Namespace: leases, Name: "ring", Identity: id,
				LeaseDuration: 8 * time.Second, RenewDeadline: 6 * time.Second, RetryPeriod: retry}
			c.ShardCache = true
		})
	}
	plan := waitPlan(t, cp.Config, leases, "a", "b")
	namespaces := spreadNamespaces(plan, base, 1)
	for _, ns := range namespaces {
		mk.namespace(t, ns)
		mk.create(t, configmapsGVR, configmap(ns, "victim", map[string]any{"sc": base}, nil))
	}
	theirs := owned(plan, "b", namespaces)[0]
	waitCached(t, replicas, plan, base, namespaces, 1, "client")

	stopped := make(chan error, 1)
	go func() { // joined below
		ok, err := replicas["b"].stop(time.Minute)
		if err == nil && !ok {
			err = errors.New("b did not stop within a minute")
		}
		stopped <- err
	}()
	// a moves to the ring without b: b's namespaces are now to be a's. Without the hand-over b
	// would handle them no longer, and a would list them after the deletion below.
	waitStatus(t, replicas["a"].engine, "a moving to the ring without b", func(st status.Status) bool {
		return st.Shard != nil && st.Shard.Pending
	})
	mk.delete(t, configmapsGVR, theirs, "victim")
	deleted := call{Script: "s.js", Event: "delete", Object: theirs + "/victim", Result: "ok"}.match
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	waitRing(t, replicas["a"], 1)
	eventually(t, "the deletion of "+theirs+"/victim handled", func() error {
		if n := len(replicas["a"].calls.find(deleted)) + len(replicas["b"].calls.find(deleted)); n != 1 {
			return fmt.Errorf("handled %d times, want once", n)
		}
		return nil
	})
}
