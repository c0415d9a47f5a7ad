package version

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/jsinformer/jsinformer/engine/internal/queue"
	"github.com/jsinformer/jsinformer/internal/scriptcache"
	"github.com/jsinformer/jsinformer/scripting"
)

// The index stage of a version whose script has index functions: one goroutine with a
// runtime of its own takes events from the version's intake, computes their index values and
// passes them on to the worker in the order they came. Index functions are pure by contract,
// so which runtime computes them cannot matter to the script, and on a reload of a large
// cache this puts them on a second core while the worker calls the handlers. Events move in
// batches of whatever is waiting, so a burst costs one lock and one wake-up per batch instead
// of per event.
//
// A reload's replay reaches the stage as one burst (the fanout queues the whole cache at once),
// so the stage, not client-go, is what a reload waits on. A batch of at least splitMin index
// calls is split in two halves, the second computed on a second runtime of the same program
// on a goroutine of the batch's own while the stage computes the first: the two cores work on
// it together, the batch goes on to the worker whole and in order. A steady stream of events
// makes batches of one or a few, which the stage's own runtime computes.

// IndexBatch is the most events the index stage takes from intake at once.
const IndexBatch = 256

// splitMin is the fewest index calls a batch splits across the two index runtimes: below it
// the hand-over to a second goroutine costs more than it saves.
const splitMin = 64

// IndexStage is a version's index stage. Run is its goroutine, which alone uses it; its
// runtimes may be interrupted and closed from any goroutine (Runtimes).
type IndexStage struct {
	first, second *scripting.Script // second: for the other half of a large batch
	names         []string          // the definition's index functions, by position
	logger        *slog.Logger
	failed        map[scriptcache.Key]bool // objects whose index function threw; logged once each
	// objs and results are the buffers of one batch.
	objs    []scripting.Object
	results []scripting.IndexResult
}

// NewIndexStage makes the index stage of prog, whose definition's index functions are names:
// two runtimes made with opts. On error nothing it made is left open.
func NewIndexStage(prog *scripting.Program, opts scripting.Options, names []string, logger *slog.Logger) (*IndexStage, error) {
	first, err := prog.Instantiate(opts)
	if err != nil {
		return nil, fmt.Errorf("instantiate index runtime: %w", err)
	}
	second, err := prog.Instantiate(opts)
	if err != nil {
		first.Close()
		return nil, fmt.Errorf("instantiate index runtime: %w", err)
	}
	return &IndexStage{first: first, second: second, names: names, logger: logger, failed: map[scriptcache.Key]bool{}}, nil
}

// Runtimes are the stage's runtimes; none for a nil stage (a script without index functions).
// Every way a version ends closes them all.
func (s *IndexStage) Runtimes() []*scripting.Script {
	if s == nil {
		return nil
	}
	return []*scripting.Script{s.first, s.second}
}

// Run takes events from in until it is closed and drained, or abort, fills in their index
// values and pushes them onto out, in order; it then closes out and the stage's runtimes.
func (s *IndexStage) Run(in, out *queue.Queue[Event], abort <-chan struct{}) {
	defer out.Close()
	defer func() {
		for _, ix := range s.Runtimes() {
			ix.Close()
		}
	}()
	batch := make([]Event, 0, IndexBatch)
	for {
		batch = in.PopBatch(abort, batch[:0], IndexBatch)
		if len(batch) == 0 {
			return
		}
		s.batch(batch)
		out.PushAll(batch)
	}
}

// batch fills in the index values of the adds and updates in batch, noting failures in
// event order. Their index functions run in one hand-over to the index runtime
// (scripting.Script.IndexAll).
func (s *IndexStage) batch(batch []Event) {
	objs := s.objs[:0]
	for i := range batch {
		if k := batch[i].Kind; k == EventAdd || k == EventUpdate {
			objs = append(objs, batch[i].Obj)
		}
	}
	if cap(s.results) < len(objs) {
		s.results = make([]scripting.IndexResult, len(objs))
	}
	s.objs = objs // keeps what append grew
	results := s.results[:len(objs)]
	s.indexAll(objs, results)
	next := 0
	for i := range batch {
		switch ev := &batch[i]; ev.Kind {
		case EventAdd, EventUpdate:
			ev.Values = results[next].Values
			s.noteFailures(ev, results[next].Errs)
			next++
		case EventDelete:
			s.noteFailures(ev, nil)
		}
	}
	clear(objs)
	clear(results)
}

// indexAll fills results with the index values of objs, splitting a large batch across the two
// index runtimes. Index functions are pure by contract, so which runtime computes an object's
// values cannot matter to the script.
func (s *IndexStage) indexAll(objs []scripting.Object, results []scripting.IndexResult) {
	if len(objs)*len(s.names) < splitMin {
		s.first.IndexAll(objs, results)
		return
	}
	half := len(objs) / 2
	var second sync.WaitGroup
	second.Go(func() { s.second.IndexAll(objs[half:], results[half:]) })
	s.first.IndexAll(objs[:half], results[:half])
	second.Wait()
}

// noteFailures logs an object's index failures the first time, and again only after its
// index functions have succeeded in between, or it was deleted.
func (s *IndexStage) noteFailures(ev *Event, failures []error) {
	k := scriptcache.Key{Resource: ev.Sub.Cache.Resource, Object: ev.Key}
	if failures == nil {
		if len(s.failed) > 0 {
			delete(s.failed, k)
		}
		return
	}
	if !s.failed[k] {
		for i, err := range failures {
			if err != nil {
				LogFailure(s.logger, "indexers."+s.names[i], k.Resource, k.Object, err)
			}
		}
	}
	s.failed[k] = true
}
