package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/sharding"
	"github.com/jsinformer/jsinformer/status"
)

// shardScript reconciles the controller owner of each ConfigMap (enqueue: "owner"), and ticks
// once a second.
func shardScript(ns string) string {
	return `export default {
  watch: { resource: "v1/configmaps", namespace: "` + ns + `", enqueue: "owner" },
  reconcile(key, ctx) {},
  schedule: [{ every: "1s", run(ctx) {} }],
};`
}

func shardedAs(ns, ring, id string) func(*engine.Config) {
	return func(c *engine.Config) {
		c.Sharding = &engine.LeaderElection{Namespace: ns, Name: ring, Identity: id,
			LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond}
	}
}

// reconciled matches the runs of key's reconcile by s.js.
func reconciled(key string) func(inspection.TraceRecord) bool {
	return call{Script: "s.js", Event: "reconcile", Object: key, Handler: "reconcile", Result: "ok"}.match
}

// ticks is how many times r ran s.js's schedule.
func ticks(r *runner) uint64 {
	s, _ := r.engine.Status().Script("s.js")
	return s.Handlers["schedule"].Calls
}

// waitTicks waits until r ran s.js's schedule n times.
func waitTicks(t *testing.T, r *runner, what string, n uint64) {
	t.Helper()
	waitScript(t, r.engine, "s.js", what, func(s status.ScriptStatus) bool { return s.Handlers["schedule"].Calls >= n })
}

func waitRing(t *testing.T, r *runner, members int) {
	t.Helper()
	waitStatus(t, r.engine, fmt.Sprintf("a settled ring of %d", members), func(st status.Status) bool {
		return st.Shard != nil && st.Shard.Valid && !st.Shard.Pending && len(st.Shard.Members) == members
	})
}

// Two sharded engines: a reconcile key is run only by its owner, also when the event that
// enqueued it (a dependent's, through enqueue: "owner") was another replica's; the schedule
// runs on one replica; when one stops, the other reconciles the keys it gained and takes the
// schedule over.
func TestShardedReconcileAndSchedule(t *testing.T) {
	t.Parallel()
	ns := fmt.Sprintf("shard-rec-%d", time.Now().UnixNano())
	scripts := map[string]string{"s.js": shardScript(ns)}
	a := startEngine(t, scripts, shardedAs(ns, "ring", "a"))
	a.namespace(t, ns)
	b := startEngine(t, scripts, shardedAs(ns, "ring", "b"))
	waitRing(t, a, 2)
	waitRing(t, b, 2)

	ring := sharding.NewRing("a", "b")
	const n = 40
	for i := range n {
		child := configmap(ns, fmt.Sprintf("child-%d", i), nil, nil)
		child["metadata"].(map[string]any)["ownerReferences"] = []any{map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "name": fmt.Sprintf("parent-%d", i), "uid": fmt.Sprintf("uid-%d", i), "controller": true}}
		a.create(t, configmapsGVR, child)
	}
	crossed := 0
	for i := range n {
		key, child := fmt.Sprintf("%s/parent-%d", ns, i), fmt.Sprintf("%s/child-%d", ns, i)
		owner, other := a, b
		if ring.Owner(key) == "b" {
			owner, other = b, a
		}
		if ring.Owner(key) != ring.Owner(child) {
			crossed++
		}
		owner.calls.waitFor(t, "reconcile of "+key, 1, reconciled(key))
		if got := other.calls.find(reconciled(key)); len(got) > 0 {
			t.Errorf("%s reconciled by its non-owner too", key)
		}
	}
	if crossed == 0 {
		t.Error("no parent's owner differs from its child's: the test shows nothing about mapped keys")
	}

	scheduler, idle := a, b
	if ring.Owner("schedule:s.js#0") == "b" {
		scheduler, idle = b, a
	}
	// Until b joined, a alone owned the schedule and may have run it: count from here, the
	// ring long settled (every key above was reconciled by its owner in the ring of two).
	idleBefore, schedulerBefore := ticks(idle), ticks(scheduler)
	waitTicks(t, scheduler, "two ticks", schedulerBefore+2)
	if got := ticks(idle) - idleBefore; got > 0 {
		t.Errorf("the schedule ran on both replicas (%d ticks on the non-owner)", got)
	}

	// b stops (as on SIGTERM): a reconciles b's keys again and runs the schedule.
	if stopped, err := b.stop(30 * time.Second); !stopped || err != nil {
		t.Fatalf("b stopped %v, err %v", stopped, err)
	}
	waitRing(t, a, 1)
	for i := range n {
		key := fmt.Sprintf("%s/parent-%d", ns, i)
		if ring.Owner(key) == "b" {
			a.calls.waitFor(t, "reconcile of b's "+key, 1, reconciled(key))
		}
	}
	waitTicks(t, a, "a tick on a", ticks(a)+1)
}

// heldScript reconciles every ConfigMap once, and those named held-N again every 2s.
func heldScript(ns string) string {
	return `export default {
  watch: { resource: "v1/configmaps", namespace: "` + ns + `" },
  reconcile(key, ctx) {
    log.info("reconciled", { key });
    return key.startsWith("` + ns + `/held-") ? { requeueAfter: "2s" } : undefined;
  },
};`
}

// A reconcile key held by a pause across a ring change is not run on resume by the replica
// that lost it: its new owner has reconciled it meanwhile, and the old one asks whether it
// owns the key only once the pause is over.
func TestShardedPauseAcrossRingChange(t *testing.T) {
	t.Parallel()
	ns := fmt.Sprintf("shard-pause-%d", time.Now().UnixNano())
	scripts := map[string]string{"p.js": heldScript(ns)}
	a := startEngine(t, scripts, shardedAs(ns, "ring", "a"))
	a.namespace(t, ns)
	waitRing(t, a, 1)
	ring := sharding.NewRing("a", "b")
	name := movingName(ring, ns, "held-", "b") // a key that moves to b when b joins
	a.create(t, configmapsGVR, configmap(ns, name, nil, nil))
	held := ns + "/" + name
	a.calls.waitFor(t, "a's first reconcile of "+held, 1, runsOf("p.js", held))
	if _, err := a.engine.Pause("p.js"); err != nil {
		t.Fatal(err)
	}
	waitRequeueDue(t, a, "p.js", held) // a's worker now holds the key for the pause

	b := startEngine(t, scripts, shardedAs(ns, "ring", "b"))
	waitRing(t, a, 2)
	waitRing(t, b, 2)
	b.calls.waitFor(t, "b's reconcile of "+held, 1, runsOf("p.js", held))
	if _, err := a.engine.Resume("p.js"); err != nil {
		t.Fatal(err)
	}
	// a's only worker runs (or drops) the held key before the next one a owns.
	after := movingName(ring, ns, "after-", "a")
	a.create(t, configmapsGVR, configmap(ns, after, nil, nil))
	a.calls.waitFor(t, "a's reconcile of "+after, 1, runsOf("p.js", ns+"/"+after))
	if got := a.calls.find(runsOf("p.js", held)); len(got) != 1 {
		t.Errorf("a reconciled %s %d times, want once (before b joined): it ran it on resume though b owns it", held, len(got))
	}
}

// movingName is the first name prefix-N whose key in ns owner owns in ring.
func movingName(ring sharding.Ring, ns, prefix, owner string) string {
	for i := 0; ; i++ {
		if name := fmt.Sprintf("%s%d", prefix, i); ring.Owner(ns+"/"+name) == owner {
			return name
		}
	}
}

// waitRequeueDue waits until key's requeueAfter in script's queue is due, and a little more,
// so that the worker has taken it.
func waitRequeueDue(t *testing.T, r *runner, script, key string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		q, err := r.engine.Queue(script)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range q.Scripts {
			for _, k := range s.Keys {
				if k.Key == key && k.NextRetry != nil && time.Since(*k.NextRetry) > 200*time.Millisecond {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s's requeue never came due in %s's queue: %+v", key, script, q)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
