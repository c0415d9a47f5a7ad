package version

import (
	"time"

	"github.com/jsinformer/jsinformer/engine/internal/enginemetrics"
	"github.com/jsinformer/jsinformer/engine/internal/schedule"
	"github.com/jsinformer/jsinformer/scripting"
)

// The calls a version's worker makes besides handlers: schedules and metric collects.

// StartSchedules starts v's scheduler (package engine/internal/schedule); called by the
// loader when v becomes current (its cache complete). It queues an EventSchedule for each
// entry of the definition's `schedule` when it is due on the engine's clock, so run(ctx) is
// called on the worker, never beside another handler of the version. Its first timer is set
// here, on the loader, so a driver that moves a virtual clock sees it as soon as the version
// serves. It is one of the version's running goroutines and ends when the version is retired.
func (v *Version) StartSchedules() {
	if len(v.def.Schedules) == 0 || v.standby {
		return
	}
	v.schedules = schedule.New(v.clock, v.def.Schedules, func(i int) { v.queue.Push(Event{Kind: EventSchedule, Due: i}) })
	v.running.Go(func() { v.schedules.Run(v.retired) }) // the worker runs, so the group cannot be at zero here
}

// callSchedule runs schedule[i].run(ctx) on the worker; ctx.cache covers every watched
// resource as the version was shown it, ctx.resource is the first watched resource.
func (v *Version) callSchedule(i int) {
	v.schedules.Started(i)
	if v.retired.Err() != nil {
		return
	}
	first := v.scheduleCache
	if first == nil {
		return
	}
	end, ok := v.begin(v.scheduleKey(i))
	if !ok {
		return // another replica runs it, or this one calls nothing
	}
	defer end()
	ctx := scripting.Event{Resource: first.Resource, Cache: first, Enqueue: v.enqueue, Metrics: v.metricSink()}
	start := time.Now()
	err := v.script.RunSchedule(i, ctx)
	v.metrics[EventSchedule].Observe(time.Since(start), err)
	if err != nil {
		v.logFailure("schedule", first.Resource, "", err)
	}
}

var _ enginemetrics.Worker = (*Version)(nil)

// QueueCollect queues a scrape's collects on v's worker; false once v takes no more events.
func (v *Version) QueueCollect(req *enginemetrics.CollectRequest) bool {
	return v.queue.Push(Event{Kind: EventCollect, Collect: req})
}

// collectMetrics runs the collects of req on the worker, between two events, so ctx.cache
// is the state the script has handled. ctx.resource is the first watched resource. A family
// is computed by one runner: the leader, and under sharding the replica owning the family's
// key (collectKey), as for a schedule entry; the others leave it out, so that summing a
// family over the replicas counts every object once.
func (v *Version) collectMetrics(req *enginemetrics.CollectRequest) {
	first := v.scheduleCache
	ev := scripting.Event{Cache: first}
	if first != nil {
		ev.Resource = first.Resource
	}
	req.Serve(func(family string, limit int) ([]scripting.MetricSample, bool, error) {
		end, ok := v.begin(v.collectKey(family))
		if !ok {
			return nil, true, nil // a standby, or another replica serves the family
		}
		defer end()
		start := time.Now()
		samples, err := v.script.Collect(family, ev, limit)
		v.metrics[EventCollect].Observe(time.Since(start), err)
		return samples, false, err
	})
}

// metricSink is ctx.metrics's Go side for v's calls: nil (an interface nil) without families.
func (v *Version) metricSink() scripting.Metrics { return v.scriptMetrics.Sink() }
