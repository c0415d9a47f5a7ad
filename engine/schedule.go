package engine

import (
	"time"

	"github.com/jsinformer/jsinformer/scripting"
)

// startSchedules starts v's scheduler; called by the loader when v becomes current (its cache
// complete). The scheduler queues an eventSchedule for each entry of the definition's
// `schedule` when it is due on the engine's clock, so run(ctx) is called on the worker, never
// beside another handler of the version. Its first timer is set here, on the loader, so a
// driver that moves a virtual clock sees it as soon as the version serves. It is one of the
// version's goroutines and ends when the version is retired. An entry due again while its last
// run is still queued is not queued twice.
func (e *Engine) startSchedules(v *version) {
	if len(v.def.Schedules) == 0 || v.standby {
		return
	}
	specs := v.def.Schedules
	next := make([]time.Time, len(specs))
	now := e.clock.Now()
	for i, s := range specs {
		next[i] = s.Next(now)
	}
	first := earliest(next)
	timer := e.clock.NewTimer(next[first].Sub(now))
	v.running.Go(func() { // the worker runs, so the group cannot be at zero here
		defer timer.Stop()
		for {
			select {
			case <-v.retired:
				return
			case fired := <-timer.C():
				if v.scheduled[first].CompareAndSwap(false, true) {
					v.queue.Push(event{kind: eventSchedule, due: first})
				}
				next[first] = specs[first].Next(fired)
				first = earliest(next)
				// After the push: a virtual clock counts the run as queued once its timer is reset.
				timer.Reset(next[first].Sub(e.clock.Now()))
			}
		}
	})
}

func earliest(ts []time.Time) int {
	first := 0
	for i, t := range ts {
		if t.Before(ts[first]) {
			first = i
		}
	}
	return first
}

// callSchedule runs schedule[i].run(ctx) on the worker; ctx.cache covers every watched
// resource as the version was shown it, ctx.resource is the first watched resource.
func (v *version) callSchedule(i int) {
	v.scheduled[i].Store(false)
	select {
	case <-v.retired:
		return
	default:
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
