package engine

import (
	"context"
	"time"
)

// leaveRing hands this replica's keys over before its scripts stop, under --shard-cache
// (sharding.Member.Leave): the others list the namespaces they take while this replica still
// handles them, so an object deleted while the replica stops is seen by one of them. It waits
// at most a lease duration (then the others take over as after a crash), meanwhile applying
// what the versions report, as the loader does; ring changes are not applied any more (a
// leaving replica owns nothing in the rings it observes).
func (e *Engine) leaveRing() {
	if e.shard == nil || !e.cfg.ShardCache {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.Sharding.LeaseDuration)
	defer cancel()
	start := time.Now()
	done := make(chan bool, 1)
	go func() { done <- e.shard.Leave(ctx) }() // joined below: Leave returns by ctx's end
	for {
		select {
		case ok := <-done:
			e.logger.Info("left the shard ring", "handed_over", ok, "took", time.Since(start).Round(time.Millisecond))
			return
		case v := <-e.synced:
			e.onSynced(v)
		case s := <-e.memoryStops:
			e.onMemoryStop(s)
		}
	}
}
