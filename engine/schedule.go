package engine

import (
	"time"

	"github.com/jsinformer/jsinformer/scripting"
)

// runSchedules is the version's scheduler: it queues an eventSchedule for each entry of the
// definition's `schedule` when it is due, so run(ctx) is called on the worker, never beside
// another handler of the version. Started by the loader when the version becomes current (its
// cache complete), it is one of the version's goroutines and ends when the version is
// retired. An entry due again while its last run is still queued is not queued twice.
func (v *version) runSchedules() {
	specs := v.def.Schedules
	next := make([]time.Time, len(specs))
	now := time.Now()
	for i, s := range specs {
		next[i] = s.Next(now)
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		first := earliest(next)
		timer.Reset(time.Until(next[first]))
		select {
		case <-v.retired:
			return
		case now := <-timer.C:
			if v.scheduled[first].CompareAndSwap(false, true) {
				v.queue.push(event{kind: eventSchedule, due: first})
			}
			next[first] = specs[first].Next(now)
		}
	}
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
	if v.standby || !v.lead.valid() || first == nil {
		return
	}
	ctx := scripting.Event{Resource: first.resource, Cache: first, Enqueue: v.enqueue, Metrics: v.metricSink()}
	start := time.Now()
	err := v.script.RunSchedule(i, ctx)
	v.metrics[eventSchedule].observe(time.Since(start), err)
	if err != nil {
		v.logFailure("schedule", first.resource, "", err)
	}
}
