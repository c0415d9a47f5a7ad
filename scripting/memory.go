package scripting

import (
	"reflect"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"

	"github.com/jsinformer/jsinformer/internal/heapsize"
)

// measureFor bounds one measurement; a runtime too large to walk in time reports a lower bound.
const measureFor = time.Second

// MemoryUsage is a measurement of the memory a Script's runtime holds: everything reachable
// from it that goja allocated for the script (objects, arrays, strings, closures and their
// variables, compiled code), estimated by internal/heapsize. Objects the runner lends to the
// script (the informer cache's objects behind views, clients) are not counted: they are the
// runner's, shared by every script.
type MemoryUsage struct {
	Bytes int64
	// Truncated: the runtime was too large to walk within the budget; Bytes is a lower bound.
	Truncated bool
	// Seq counts the measurements taken; zero when none was.
	Seq uint64
	// Took is how long the walk took.
	Took time.Duration
}

// memory is a Script's measurement state: requested from any goroutine, taken by the owner.
type memory struct {
	wanted atomic.Bool
	last   atomic.Pointer[MemoryUsage]
	// budget overrides measureFor when positive; set only before the first call (tests that
	// check exact figures on a loaded machine, where a walk can pass one second).
	budget time.Duration
}

// RequestMemoryUsage asks for a measurement, taken by the owner's goroutine at the end of the
// Script's next call: a runtime grows only while it runs, so one that makes no call keeps its
// last measurement. Safe from any goroutine.
func (s *Script) RequestMemoryUsage() { s.mem.wanted.Store(true) }

// MemoryUsage returns the latest measurement. Safe from any goroutine.
func (s *Script) MemoryUsage() MemoryUsage {
	if m := s.mem.last.Load(); m != nil {
		return *m
	}
	return MemoryUsage{}
}

// measureIfWanted measures in after a call, on the owner's goroutine. The executor is idle
// between calls, so nothing writes the runtime during the walk but goja's interrupt, whose
// fields the walk does not read.
func (s *Script) measureIfWanted(in *instance) {
	if !s.mem.wanted.Load() {
		return
	}
	s.mu.Lock()
	current := s.cur == in
	s.mu.Unlock()
	if !current || !s.mem.wanted.CompareAndSwap(true, false) {
		return // abandoned: its runtime may still be running
	}
	budget := measureFor
	if s.mem.budget > 0 {
		budget = s.mem.budget
	}
	start := time.Now()
	r := heapsize.Measure(in.roots(), runtimeWalk(start.Add(budget)))
	m := &MemoryUsage{Bytes: r.Bytes, Truncated: r.Truncated, Took: time.Since(start)}
	if prev := s.mem.last.Load(); prev != nil {
		m.Seq = prev.Seq
	}
	m.Seq++
	s.mem.last.Store(m)
}

// roots are where the script's memory hangs from: the runtime (globals, the stack, compiled
// code) and the objects the instance holds outside it, the exported definition above all,
// whose handlers' closures hold the module's variables.
func (s *instance) roots() any {
	return &struct {
		rt                 *goja.Runtime
		def, indexers, ctx *goja.Object
	}{s.rt, s.defObj, s.indexersObj, s.ctxObj}
}

// runtimeWalk follows goja's own types only: a runtime reaches the runner's memory through
// views and Go values it wraps, and those are the runner's, not the script's.
func runtimeWalk(deadline time.Time) heapsize.Config {
	return heapsize.Config{
		Follow:   func(t reflect.Type) bool { return strings.HasPrefix(t.PkgPath(), "github.com/dop251/goja") },
		Skip:     skipInterruptFields,
		Deadline: deadline,
	}
}

// skipInterruptFields leaves out the fields goja's Interrupt writes from other goroutines.
func skipInterruptFields(t reflect.Type, f reflect.StructField) bool {
	return t.PkgPath() == "github.com/dop251/goja" && t.Name() == "vm" &&
		(f.Name == "interruptVal" || f.Name == "interruptLock" || f.Name == "interrupted")
}
