package engine

import (
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
// A split of each batch across one runtime per core was tried: on two cores it bought nothing
// (a reload is CPU-bound across both already) and cost a runtime per core to build.

// indexBatch is the most events taken from intake at once.
const indexBatch = 256

// index runs the index stage until intake is closed and drained, or abort; it then closes the
// worker's queue.
func (v *version) index() {
	defer v.queue.close()
	defer v.indexer.Close()
	batch := make([]event, 0, indexBatch)
	for {
		batch = v.intake.popBatch(v.abort, batch[:0], indexBatch)
		if len(batch) == 0 {
			return
		}
		v.indexBatch(batch)
		v.queue.pushAll(batch)
	}
}

// indexBatch fills in the index values of the adds and updates in batch, noting failures.
func (v *version) indexBatch(batch []event) {
	for i := range batch {
		switch ev := &batch[i]; ev.kind {
		case eventAdd, eventUpdate:
			var failures []error
			ev.values, failures = v.indexValues(ev.obj)
			v.noteIndexFailures(ev, failures)
		case eventDelete:
			v.noteIndexFailures(ev, nil)
		}
	}
}

// indexValues runs every index function on obj; values[i] belongs to def.Indexers[i], and so
// does failures[i] (failures is nil when all succeeded). A throwing function leaves the object
// out of that index.
func (v *version) indexValues(obj scripting.Object) (values [][]string, failures []error) {
	values = make([][]string, len(v.def.Indexers))
	for i, name := range v.def.Indexers {
		vals, err := v.indexer.Index(name, obj)
		if err != nil {
			if failures == nil {
				failures = make([]error, len(v.def.Indexers))
			}
			failures[i] = err
			continue
		}
		values[i] = vals
	}
	return values, failures
}

// noteIndexFailures logs an object's index failures the first time, and again only after its
// index functions have succeeded in between, or it was deleted. Runs on the index goroutine.
func (v *version) noteIndexFailures(ev *event, failures []error) {
	k := scriptcache.Key{Resource: ev.sub.cache.Resource, Object: ev.key}
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
