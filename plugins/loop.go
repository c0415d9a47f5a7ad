package plugins

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

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
	// settle follows the Loaded events after the initial scan until they are Settled.
	settle *settler
	// lost ticks while the scripts folder is gone: the kernel dropped its watch
	// with it, so nothing else would say when it is back. Nil otherwise.
	lost       *time.Ticker
	lostPeriod time.Duration
}

func (w *Watcher) newRun(fw *fsnotify.Watcher, deb *debouncer, emit func(Event)) *run {
	r := &run{log: w.log, fw: fw, deb: deb, emit: emit, st: newState(), lostPeriod: w.rootPoll,
		settle: newSettler(w.opts.Grace, w.readFile)}
	r.sc = scanner{root: w.dir, exts: w.opts.Extensions, log: w.log, watch: r.addWatch, readFile: w.readFile}
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
	files, kept, err := r.sc.scan()
	if err != nil {
		return fmt.Errorf("scan scripts folder %s: %w", r.sc.root, err)
	}
	snap, _ := r.gr.plugins(files) // nothing emitted yet, so nothing is held back
	if len(snap) == 0 {
		r.log.Warn("no scripts found", keyDir, r.sc.root)
	}
	events, _ := r.st.apply(snap, kept)
	r.send(events)
	r.emit(Event{Kind: Synced})
	return nil
}

func (r *run) loop(ctx context.Context) error {
	defer r.found()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.lostC():
			if isDir(r.sc.root) {
				r.found()
				r.log.Info("scripts folder is back; watching it again", keyDir, r.sc.root)
				r.rescan() // re-adds the watches, the root's first
			}
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
		case <-r.settle.fired():
			events, changed := r.settle.due(time.Now())
			if changed {
				r.log.Debug("script changed since it was read; rescanning")
				r.deb.kick()
			}
			r.send(events)
		}
	}
}

// rescan diffs the folder against what was emitted. If the folder itself
// cannot be read the last emitted state stands: an unreadable root says
// nothing about which scripts exist. If it is gone, it is polled for until it
// is back.
func (r *run) rescan() {
	files, kept, err := r.sc.scan()
	if err != nil {
		if !isDir(r.sc.root) {
			r.lose()
			return
		}
		r.log.Error("cannot rescan scripts folder; keeping current scripts", keyDir, r.sc.root, keyError, err)
		return
	}
	snap, heldModule := r.gr.plugins(files)
	events, retry := r.st.apply(snap, kept)
	if retry || heldModule {
		r.log.Debug("script or module became empty; waiting one more quiet period for its content")
		r.deb.kick()
	}
	r.settle.follow(events, files, time.Now())
	r.send(events)
}

// lose starts polling for the scripts folder, which is gone.
func (r *run) lose() {
	if r.lost != nil {
		return
	}
	r.lost = time.NewTicker(r.lostPeriod)
	r.log.Error("scripts folder is gone; its scripts keep running until it is back",
		keyDir, r.sc.root, "poll_every", r.lostPeriod.String())
}

// found stops polling; idempotent.
func (r *run) found() {
	if r.lost != nil {
		r.lost.Stop()
		r.lost = nil
	}
}

// lostC ticks while the folder is gone; nil (never ready) otherwise.
func (r *run) lostC() <-chan time.Time {
	if r.lost == nil {
		return nil
	}
	return r.lost.C
}

func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

func (r *run) send(events []Event) {
	for _, ev := range events {
		r.logEvent(ev)
		r.emit(ev)
	}
}

func (r *run) logEvent(ev Event) {
	switch ev.Kind {
	case Removed:
		r.log.Debug("script file removed", keyScript, ev.Source.Name)
		return
	case Settled:
		r.log.Debug("script file settled", keyScript, ev.Source.Name, keyVersion, ev.Source.Hash)
		return
	}
	r.log.Debug("script file changed", keyScript, ev.Source.Name, keyVersion, ev.Source.Hash, keyModules, ev.Source.Modules)
}
