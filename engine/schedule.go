package engine

import (
	"time"

	"github.com/jsinformer/jsinformer/engine/internal/schedule"
	"github.com/jsinformer/jsinformer/scripting"
)

// startSchedules starts v's scheduler (package engine/internal/schedule); called by the loader
// when v becomes current (its cache complete). It queues an eventSchedule for each entry of
// the definition's `schedule` when it is due on the engine's clock, so run(ctx) is called on
// the worker, never beside another handler of the version. Its first timer is set here, on the
// loader, so a driver that moves a virtual clock sees it as soon as the version serves. It is
// one of the version's running goroutines and ends when the version is retired.
func (e *Engine) startSchedules(v *version) {
	if len(v.def.Schedules) == 0 || v.standby {
		return
	}
	v.schedules = schedule.New(e.clock, v.def.Schedules, func(i int) { v.queue.Push(event{Kind: eventSchedule, Due: i}) })
	v.running.Go(func() { v.schedules.Run(v.retired) }) // the worker runs, so the group cannot be at zero here
}

// callSchedule runs schedule[i].run(ctx) on the worker; ctx.cache covers every watched
// resource as the version was shown it, ctx.resource is the first watched resource.
func (v *version) callSchedule(i int) {
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
	v.metrics[eventSchedule].Observe(time.Since(start), err)
	if err != nil {
		v.logFailure("schedule", first.Resource, "", err)
	}
}
