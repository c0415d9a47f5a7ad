package plugins

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/fsnotify/fsnotify"
)

// run is one Run call's state; it belongs to Run's goroutine.
type run struct {
	log  *slog.Logger
	fw   *fsnotify.Watcher
	deb  *debouncer
	emit func(Event)
	sc   scanner
	gr   *graph
	st   *state
}

func (w *Watcher) newRun(fw *fsnotify.Watcher, deb *debouncer, emit func(Event)) *run {
	r := &run{log: w.log, fw: fw, deb: deb, emit: emit, st: newState()}
	r.sc = scanner{root: w.dir, exts: w.opts.Extensions, log: w.log, watch: r.addWatch}
	r.gr = newGraph(w.dir, w.opts.Imports, w.log, r.addWatch)
	return r
}

// addWatch is called for every folder on every scan. Re-adding a watched
// folder is cheap and harmless, and it is how subfolders created later and
// folders behind a swapped symlink get watched. Watches are never removed:
// the kernel drops them when their folder goes.
func (r *run) addWatch(dir string) {
	if err := r.fw.Add(dir); err != nil {
		r.log.Warn("cannot watch folder; changes in it may be missed", keyDir, dir, keyError, err)
	}
}

// initial emits the first scan, then Synced.
func (r *run) initial() error {
	files, err := r.sc.scan()
	if err != nil {
		return fmt.Errorf("scan scripts folder %s: %w", r.sc.root, err)
	}
	snap, _ := r.gr.plugins(files) // nothing emitted yet, so nothing is held back
	if len(snap) == 0 {
		r.log.Warn("no scripts found", keyDir, r.sc.root)
	}
	events, _ := r.st.apply(snap)
	r.send(events)
	r.emit(Event{Kind: Synced})
	return nil
}

func (r *run) loop(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-r.fw.Events:
			if !ok {
				return errors.New("watch scripts folder: event channel closed")
			}
			r.log.Debug("folder changed", keyPath, ev.Name, keyOp, ev.Op.String())
			r.deb.kick()
		case err, ok := <-r.fw.Errors:
			if !ok {
				return errors.New("watch scripts folder: error channel closed")
			}
			// Overflow included: events may have been lost, and a full
			// rescan recovers from whatever they were.
			r.log.Warn("file watcher error; rescanning", keyError, err)
			r.deb.kick()
		case <-r.deb.fired():
			r.rescan()
		}
	}
}

// rescan diffs the folder against what was emitted. If the folder itself
// cannot be read the last emitted state stands: an unreadable root says
// nothing about which scripts exist.
func (r *run) rescan() {
	files, err := r.sc.scan()
	if err != nil {
		r.log.Error("cannot rescan scripts folder; keeping current scripts", keyDir, r.sc.root, keyError, err)
		return
	}
	snap, heldModule := r.gr.plugins(files)
	events, retry := r.st.apply(snap)
	if retry || heldModule {
		r.log.Debug("script or module became empty; waiting one more quiet period for its content")
		r.deb.kick()
	}
	r.send(events)
}

func (r *run) send(events []Event) {
	for _, ev := range events {
		r.logEvent(ev)
		r.emit(ev)
	}
}

func (r *run) logEvent(ev Event) {
	if ev.Kind == Removed {
		r.log.Debug("script file removed", keyScript, ev.Source.Name)
		return
	}
	r.log.Debug("script file changed", keyScript, ev.Source.Name, keyVersion, ev.Source.Hash, keyModules, ev.Source.Modules)
}
