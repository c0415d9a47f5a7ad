package scripting

import (
	"fmt"
	"strconv"
	"time"

	"github.com/dop251/goja"
	"github.com/robfig/cron/v3"
)

// Schedules: `schedule: [{ every: "30s", run(ctx) {} }, { cron: "0 3 * * *", run(ctx) {} }]`.
// The engine decides when; RunSchedule calls run(ctx) like any handler.

// ScheduleSpec is one entry of a definition's `schedule`: exactly one of Every or Cron.
type ScheduleSpec struct {
	Every time.Duration
	Cron  string
}

// Next is when the schedule fires next after t.
func (s ScheduleSpec) Next(t time.Time) time.Time {
	if s.Every > 0 {
		return t.Add(s.Every)
	}
	sched, err := cronParser.Parse(s.Cron)
	if err != nil { // validated at load
		return time.Time{}
	}
	return sched.Next(t)
}

// cronParser reads standard five-field expressions and descriptors such as @hourly.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// minEvery keeps a typo ("1ms") from turning a schedule into a busy loop.
const minEvery = time.Second

// maxSchedules bounds the schedule list, which a script could give any length.
const maxSchedules = 100

var scheduleKeys = []string{"every", "cron", "run"}

// readSchedule reads the optional `schedule` list and keeps each run function.
func (s *instance) readSchedule(v goja.Value, l locator) error {
	if isMissing(v) {
		return nil
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() != "Array" {
		return invalidf(l.file, l.line("schedule"), fmt.Sprintf("'schedule' must be a list of {every | cron, run}, got %s", typeName(v)))
	}
	n := int(min(obj.Get("length").ToInteger(), maxSchedules+1))
	if n > maxSchedules {
		return invalidf(l.file, l.line("schedule"), fmt.Sprintf("'schedule' has more than %d entries", maxSchedules))
	}
	for i := range n {
		spec, fn, err := readScheduleEntry(obj.Get(strconv.Itoa(i)), fmt.Sprintf("schedule[%d]", i), l)
		if err != nil {
			return err
		}
		s.def.Schedules = append(s.def.Schedules, spec)
		s.scheduleFns = append(s.scheduleFns, fn)
	}
	return nil
}

func readScheduleEntry(v goja.Value, where string, l locator) (ScheduleSpec, goja.Callable, error) {
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() == "Array" || isFunction(obj) {
		return ScheduleSpec{}, nil, invalidf(l.file, l.line("schedule"), fmt.Sprintf("'%s' must be an object {every | cron, run}, got %s", where, typeName(v)))
	}
	if err := l.checkKeys(obj, where, scheduleKeys); err != nil {
		return ScheduleSpec{}, nil, err
	}
	fn, err := optionalFunc(obj.Get("run"), where+".run", l)
	if err != nil {
		return ScheduleSpec{}, nil, err
	}
	if fn == nil {
		return ScheduleSpec{}, nil, invalidf(l.file, l.line("schedule"), fmt.Sprintf("'%s.run' must be a function", where))
	}
	spec, err := readWhen(obj, where, l)
	return spec, fn, err
}

// readWhen reads exactly one of every (a Go duration string, at least 1s) or cron.
func readWhen(obj *goja.Object, where string, l locator) (ScheduleSpec, error) {
	every, cronExpr := obj.Get("every"), obj.Get("cron")
	switch {
	case isMissing(every) == isMissing(cronExpr):
		return ScheduleSpec{}, invalidf(l.file, l.line("schedule"), fmt.Sprintf("'%s' must have exactly one of 'every' or 'cron'", where))
	case !isMissing(every):
		d, err := time.ParseDuration(every.String())
		if err != nil || !isString(every) {
			return ScheduleSpec{}, invalidf(l.file, l.line("every"), fmt.Sprintf("'%s.every' must be a duration such as \"30s\" or \"5m\", got %s", where, every.String()))
		}
		if d < minEvery {
			return ScheduleSpec{}, invalidf(l.file, l.line("every"), fmt.Sprintf("'%s.every' must be at least %s, got %s", where, minEvery, d))
		}
		return ScheduleSpec{Every: d}, nil
	}
	if _, err := cronParser.Parse(cronExpr.String()); err != nil || !isString(cronExpr) {
		return ScheduleSpec{}, invalidf(l.file, l.line("cron"), fmt.Sprintf("'%s.cron' %q is not a cron expression (minute hour day-of-month month day-of-week, or @hourly, @daily, ...): %v",
			where, cronExpr.String(), err))
	}
	return ScheduleSpec{Cron: cronExpr.String()}, nil
}

// RunSchedule calls schedule[i].run(ctx).
func (s *Script) RunSchedule(i int, ev Event) error {
	label := fmt.Sprintf("schedule[%d]", i)
	if i < 0 || i >= len(s.def.Schedules) {
		return s.noop(label)
	}
	return s.run(label, func(in *instance) error { return in.handle(label, in.scheduleFns[i], ev, in.ctxObj) })
}
