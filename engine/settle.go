package engine

import (
	"log/slog"

	"github.com/jsinformer/jsinformer/plugins"
)

// failures is what the loader knows of scripts that did not load. A load of content read
// moments after it changed (plugins.Source.Settling) that fails is held, not reported: it may
// be a save in progress read half-written, and the error is reported only when the watcher
// says that content has stayed unchanged for its grace period (plugins.Settled). Newer content
// or a removal supersedes it. A successful load is never held. Owned by the loader goroutine.
type failures struct {
	held map[string]heldFailure // script name → the failure waiting for its content to settle
	// reported is the content hash whose failure was last reported per script, until content
	// of that script loads, so that a held failure of that same content (saved again, after a
	// half-written save in between) is not reported twice.
	reported map[string]string
}

type heldFailure struct {
	src plugins.Source
	err error
}

// hold keeps the failure of a Settling source back and reports true; false for any other.
func (f *failures) hold(logger *slog.Logger, src plugins.Source, err error) bool {
	if !src.Settling {
		return false
	}
	if f.held == nil {
		f.held = map[string]heldFailure{}
	}
	src.Settling = false // reported as is once settled, and retried as is if it waits for a resource
	f.held[src.Name] = heldFailure{src: src, err: err}
	logger.Debug("script not loaded; reported if its file stays unchanged", "error", err.Error())
	return true
}

// supersede forgets the held failure of a script whose content changed or that was removed.
func (f *failures) supersede(name string) { delete(f.held, name) }

// forget forgets the reported failure of a script whose content loads, is its running one
// again, or is removed.
func (f *failures) forget(name string) { delete(f.reported, name) }

// didReport records that the failure of src was reported.
func (f *failures) didReport(src plugins.Source) {
	if f.reported == nil {
		f.reported = map[string]string{}
	}
	f.reported[src.Name] = src.Hash
}

// alreadyReported tells whether the failure of this content of the script was the last reported.
func (f *failures) alreadyReported(src plugins.Source) bool {
	return f.reported[src.Name] == src.Hash
}

// onSettled reports the held failure of the content that settled, if any.
func (e *Engine) onSettled(src plugins.Source) {
	h, ok := e.failures.held[src.Name]
	if !ok || h.src.Hash != src.Hash {
		return
	}
	delete(e.failures.held, src.Name)
	lastErr := ""
	if e.failures.alreadyReported(h.src) {
		lastErr = h.err.Error() // the same content failed before: not news
	}
	e.loadFailed(e.logger.With("script", h.src.Name, "version", h.src.Hash), h.src, h.err, lastErr)
}
