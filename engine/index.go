package engine

import (
	"sync"

	"github.com/jsinformer/jsinformer/internal/scriptcache"
	"github.com/jsinformer/jsinformer/scripting"
)

// The index stage of a version whose script has index functions: one goroutine with a
// runtime of its own takes events from intake, computes their index values and passes them on
// to the worker in the order they came. Index functions are pure by contract, so which runtime
// computes them cannot matter to the script, and on a reload of a large cache this puts them
// on a second core while the worker calls the handlers. Events move in batches of whatever is
// waiting, so a burst costs one lock and one wake-up per batch instead of per event.
//
// A reload's replay reaches the stage as one burst (the fanout queues the whole cache at once),
// so the stage, not client-go, is what a reload waits on. A batch of at least splitMin index
// calls is split in two halves, the second computed on a second runtime of the same program
// (indexer2) on a goroutine of the batch's own while the stage computes the first: the two
// cores work on it together, the batch goes on to the worker whole and in order. A steady
// stream of events makes batches of one or a few, which the stage's own runtime computes.

// indexBatch is the most events taken from intake at once.
const indexBatch = 256

// splitMin is the fewest index calls a batch splits across the two index runtimes: below it
// the hand-over to a second goroutine costs more than it saves.
const splitMin = 64

// index runs the index stage until intake is closed and drained, or abort; it then closes the
// worker's queue.
func (v *version) index() {
	defer v.queue.Close()
	defer func() {
		for _, ix := range v.indexers() {
			ix.Close()
		}
	}()
	batch := make([]event, 0, indexBatch)
	for {
		batch = v.intake.PopBatch(v.abort, batch[:0], indexBatch)
		if len(batch) == 0 {
			return
		}
		v.indexBatch(batch)
		v.queue.PushAll(batch)
	}
}

// indexers are v's index runtimes: none without index functions, else the stage's own and,
// when built, the second one for large batches. Every way a version ends closes them all.
func (v *version) indexers() []*scripting.Script {
	switch {
	case v.indexer == nil:
		return nil
	case v.indexer2 == nil:
		return []*scripting.Script{v.indexer}
	}
	return []*scripting.Script{v.indexer, v.indexer2}
}

// indexBatch fills in the index values of the adds and updates in batch, noting failures in
// event order. Their index functions run in one hand-over to the index runtime
// (scripting.Script.IndexAll).
func (v *version) indexBatch(batch []event) {
	objs := v.indexObjs[:0]
	for i := range batch {
		if k := batch[i].Kind; k == eventAdd || k == eventUpdate {
			objs = append(objs, batch[i].Obj)
		}
	}
	if cap(v.indexResults) < len(objs) {
		v.indexResults = make([]scripting.IndexResult, len(objs))
	}
	v.indexObjs = objs // keeps what append grew
	results := v.indexResults[:len(objs)]
	v.indexAll(objs, results)
	next := 0
	for i := range batch {
		switch ev := &batch[i]; ev.Kind {
		case eventAdd, eventUpdate:
			ev.Values = results[next].Values
			v.noteIndexFailures(ev, results[next].Errs)
			next++
		case eventDelete:
			v.noteIndexFailures(ev, nil)
		}
	}
	clear(objs)
	clear(results)
}

// indexAll fills results with the index values of objs, splitting a large batch across the two
// index runtimes. Index functions are pure by contract, so which runtime computes an object's
// values cannot matter to the script.
func (v *version) indexAll(objs []scripting.Object, results []scripting.IndexResult) {
	if v.indexer2 == nil || len(objs)*len(v.def.Indexers) < splitMin {
		v.indexer.IndexAll(objs, results)
		return
	}
	half := len(objs) / 2
	var second sync.WaitGroup
	second.Go(func() { v.indexer2.IndexAll(objs[half:], results[half:]) })
	v.indexer.IndexAll(objs[:half], results[:half])
	second.Wait()
}

// noteIndexFailures logs an object's index failures the first time, and again only after its
// index functions have succeeded in between, or it was deleted. Runs on the index goroutine.
func (v *version) noteIndexFailures(ev *event, failures []error) {
	k := scriptcache.Key{Resource: ev.Sub.Cache.Resource, Object: ev.Key}
	if failures == nil {
		if len(v.indexFailed) > 0 {
			delete(v.indexFailed, k)
		}
		return
	}
	if !v.indexFailed[k] {
		for i, err := range failures {
			if err != nil {
				v.logFailure("indexers."+v.def.Indexers[i], k.Resource, k.Object, err)
			}
		}
	}
	v.indexFailed[k] = true
}
