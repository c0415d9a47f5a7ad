package scripting

import (
	"errors"
	"sync/atomic"

	"github.com/dop251/goja"
)

// Index functions of many objects in one hand-over.
//
// Index runs one call per hand-over to the runtime's goroutine, and every top-level goja call
// ends by dropping the runtime's value stack (goja's Runtime.leave), which the next call grows
// again from nothing. A reload computes the index functions of every cached object, so
// IndexAll hands a whole batch over at once and runs its calls nested inside one call of a Go
// function (runBatch): nested calls keep the value stack, and the batch costs one hand-over.
// Each call keeps its own deadline (watchdog arm and disarm per call), errors and results,
// exactly as Index.
//
// Two things only a top-level call does are kept: the promise jobs the calls queued run when
// the batch's top-level call ends, under a deadline of their own; a promise a nested call returns still
// pending (an async index function that awaits) settles only when the top-level call ends
// and its jobs run, so such a call is run again at top level (index functions are pure, so
// running one twice cannot be seen); and a call stuck past its deadline abandons the runtime
// as Index would: the results published before it stand, it fails with the abandonment's
// error, and the rest of the batch runs on a fresh runtime.

// batchProgram calls its argument from a JS frame. Go calling a Go function directly pushes no
// frame, and goja treats a call made with no frame on its stack as top level (dropping the
// value stack when it ends); called from this frame, runBatch's calls are nested.
var batchProgram = goja.MustCompile(internalName, `(function (run) { return run(); })`, true)

// IndexResult is what the index functions made of one object: Values[j] belongs to
// Definition().Indexers[j], and so does Errs[j]. Errs is nil when every function succeeded;
// a function that failed leaves the object out of its index (Values[j] nil).
type IndexResult struct {
	Values [][]string
	Errs   []error
}

// indexBatch is one hand-over of IndexAll: the calls (object, function) numbered p = i*m+j,
// run in order from done. The executor writes vals[p] and errs[p], then publishes done = p+1;
// the owner reads only what done says was written, so an abandoned executor that carries on
// never races with it.
type indexBatch struct {
	objs    []Object
	names   []string
	vals    [][]string
	errs    []error
	done    atomic.Int64
	pending int // the call whose nested run returned a pending promise; -1 for none
}

func (b *indexBatch) calls() int { return len(b.objs) * len(b.names) }

// IndexAll fills out[i] (len(out) >= len(objs)) with the index values of objs[i], as Index
// would compute them one call at a time, in one hand-over to the runtime's goroutine.
func (s *Script) IndexAll(objs []Object, out []IndexResult) {
	names := s.def.Indexers
	m := len(names)
	for i := range objs {
		out[i] = IndexResult{Values: make([][]string, m)}
	}
	if m == 0 || len(objs) == 0 {
		return
	}
	b := s.idx
	if b == nil || cap(b.vals) < len(objs)*m {
		b = &indexBatch{vals: make([][]string, len(objs)*m), errs: make([]error, len(objs)*m)}
	}
	b.objs, b.names = objs, names
	b.vals, b.errs = b.vals[:len(objs)*m], b.errs[:len(objs)*m]
	for from := 0; from < b.calls(); {
		b.done.Store(int64(from))
		err := s.run("indexers", func(in *instance) error { in.indexBatch(b); return nil })
		done := int(b.done.Load())
		for p := from; p < done; p++ {
			s.keep(out, b, p, b.vals[p], b.errs[p])
		}
		if err == nil || done >= b.calls() {
			break // every call ran
		}
		// The hand-over failed (abandoned, interrupted, or no runtime to be had): the call
		// after the last published one gets its error, the rest go to the next hand-over.
		s.keep(out, b, done, nil, err)
		from = done + 1
		b = &indexBatch{objs: objs, names: names, vals: make([][]string, len(b.vals)), errs: make([]error, len(b.errs))}
	}
	clear(b.vals)
	clear(b.errs)
	b.objs, b.names = nil, nil
	s.idx = b // not abandoned: the executor is done with it
}

// keep stores the outcome of call p into out.
func (s *Script) keep(out []IndexResult, b *indexBatch, p int, vals []string, err error) {
	m := len(b.names)
	r := &out[p/m]
	if err != nil {
		if r.Errs == nil {
			r.Errs = make([]error, m)
		}
		r.Errs[p%m] = err
		return
	}
	r.Values[p%m] = vals
}

// indexBatch runs b's calls from b.done on, nested in one top-level call; a call whose nested
// run returned a pending promise runs again at top level, and the batch goes on after it.
func (s *instance) indexBatch(b *indexBatch) {
	if s.batchFn == nil && !s.makeBatchFn() {
		for p := int(b.done.Load()); p < b.calls(); p++ { // no trampoline: one top-level call each
			b.vals[p], b.errs[p] = s.index(b.names[p%len(b.names)], b.objs[p/len(b.names)])
			b.done.Store(int64(p + 1))
		}
		return
	}
	for int(b.done.Load()) < b.calls() {
		b.pending = -1
		s.batch = b
		_, err := s.batchFn(goja.Undefined(), s.runBatchFn)
		s.batch = nil
		s.endJobs(err)
		p := b.pending
		if p < 0 {
			return
		}
		b.vals[p], b.errs[p] = s.index(b.names[p%len(b.names)], b.objs[p/len(b.names)])
		b.done.Store(int64(p + 1))
	}
}

// endJobs ends the deadline runBatch armed for the promise jobs its calls queued, which goja
// runs as the top-level call returns (a top-level Index call runs them under its own
// deadline). Every call's result is published by then, so a job that fails or times out can
// only be logged.
func (s *instance) endJobs(err error) {
	if s.jobsArmed {
		s.jobsArmed = false
		s.end(&err)
	}
	if err == nil {
		return
	}
	if se := s.scriptError(err); !errors.Is(se, ErrInterrupted) {
		s.log.Warn("a promise job queued by an index function failed", "error", se.Error())
	}
}

// makeBatchFn makes the trampoline and runBatch's JS function; false if the runtime refuses
// (interrupted before its first batch).
func (s *instance) makeBatchFn() bool {
	v, err := s.rt.RunProgram(batchProgram)
	if err != nil {
		return false
	}
	s.batchFn, _ = goja.AssertFunction(v)
	s.runBatchFn = s.rt.ToValue(s.runBatch)
	return s.batchFn != nil
}

// runBatch is the Go function indexBatch calls: it runs the batch's calls nested, until the
// end or a call whose result is a promise still pending.
func (s *instance) runBatch(goja.FunctionCall) goja.Value {
	b := s.batch
	for p := int(b.done.Load()); p < b.calls(); p++ {
		vals, pending, err := s.indexNested(b.names[p%len(b.names)], b.objs[p/len(b.names)])
		if pending {
			b.pending = p
			break
		}
		b.vals[p], b.errs[p] = vals, err
		b.done.Store(int64(p + 1))
	}
	s.jobsArmed = s.beginPure("indexers", "index functions") == nil // the jobs run once this returns: see endJobs
	return goja.Undefined()
}

// indexNested is index for a call nested in runBatch; pending reports a returned promise that
// is still pending (its values and err are then meaningless).
func (s *instance) indexNested(name string, obj Object) (values []string, pending bool, err error) {
	ix := s.indexers[name]
	if err := s.beginPure(ix.label, "index functions"); err != nil {
		return nil, false, err
	}
	defer s.end(&err)
	v, err := ix.fn(s.indexersObj, s.view(obj))
	if err != nil {
		return nil, false, s.scriptError(err)
	}
	if isPending(v) {
		return nil, true, nil
	}
	if v, err = s.settle(v); err != nil {
		return nil, false, err
	}
	values, err = s.indexValues(v)
	return values, false, err
}

// isPending reports whether v is a promise still pending.
func isPending(v goja.Value) bool {
	obj, ok := v.(*goja.Object)
	if !ok || obj.ExportType() != promiseType {
		return false
	}
	return obj.Export().(*goja.Promise).State() == goja.PromiseStatePending
}
