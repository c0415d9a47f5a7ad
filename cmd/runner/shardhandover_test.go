package main

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/sharding"
)

// reconcileScript logs each reconcile with its key.
const reconcileScript = `export default {
  watch: { resource: "v1/configmaps", namespace: "NAMESPACE" },
  reconcile(key, ctx) { log.info("reconciled", { name: key }); },
};`

// reconciles counts r's reconciles of key logged after since.
func (r *shardReplica) reconciles(t *testing.T, key string, since time.Time) int {
	t.Helper()
	n := 0
	for _, l := range r.lines(t) {
		if l.Msg == "reconciled" && l.Attrs.Name == key && l.Time.After(since) {
			n++
		}
	}
	return n
}

// ownedBy returns the first name prefix-N whose key id owns in ring.
func (se *shardEnv) ownedBy(ring sharding.Ring, prefix, id string) string {
	for i := 0; ; i++ {
		if name := fmt.Sprintf("%s%d", prefix, i); ring.Owner(se.key(name)) == id {
			return name
		}
	}
}

// kill -9 of a replica, then one of its objects deleted before its Lease expires: nobody
// queues the key then, and no cached object maps to it once its new owner replays the keys
// it gained; the survivors remembered the event, and the new owner reconciles the key once.
func TestShardedKilledOwnersDeletedKeyIsReconciled(t *testing.T) {
	cp := controlplane.Require(t, env)
	se := newShardEnv(t, cp, reconcileScript)
	ids := []string{"shard-a", "shard-b", "shard-c"}
	for _, id := range ids {
		se.start(t, id)
	}
	se.waitMembers(t, ids...)
	three, two := sharding.NewRing(ids...), sharding.NewRing("shard-a", "shard-b")
	victim := se.ownedBy(three, "victim-", "shard-c")
	se.apply(t, []string{victim}, "1", true)
	se.replicas["shard-c"].waitLog(t, "reconciled", se.key(victim), 30*time.Second)

	c := se.replicas["shard-c"]
	c.stopped = time.Now()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-c.done
	if err := se.dyn.Resource(configmaps).Namespace(se.ns).Delete(t.Context(), victim, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	if deleted.Sub(c.stopped) >= testLease {
		t.Fatalf("the delete came %v after the kill, not within the lease duration", deleted.Sub(c.stopped))
	}
	se.waitMembers(t, "shard-a", "shard-b")
	heir := se.replicas[two.Owner(se.key(victim))]
	heir.waitLog(t, "reconciled", se.key(victim), testLease+10*time.Second)
	// The heir's only reconcile worker takes a key queued later only after the victim's.
	later := se.ownedBy(two, "later-", heir.id)
	se.apply(t, []string{later}, "1", true)
	heir.waitLog(t, "reconciled", se.key(later), 30*time.Second)
	total := 0
	for _, id := range []string{"shard-a", "shard-b"} {
		n := se.replicas[id].reconciles(t, se.key(victim), c.stopped)
		t.Logf("%s reconciled %s %d times after the kill", id, victim, n)
		total += n
	}
	if total != 1 {
		t.Errorf("%s, deleted while its owner was dead, was reconciled %d times by the survivors, want once", victim, total)
	}
}
