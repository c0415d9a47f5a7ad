package settle

import (
	"log/slog"

	"github.com/jsinformer/jsinformer/plugins"
)

// Failures is what the loader knows of scripts that did not load. The zero Failures holds
// nothing and is ready to use.
type Failures struct {
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

// Hold keeps the failure of a Settling source back and reports true; false for any other.
func (f *Failures) Hold(logger *slog.Logger, src plugins.Source, err error) bool {
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

// Supersede forgets the held failure of a script whose content changed or that was removed.
func (f *Failures) Supersede(name string) { delete(f.held, name) }

// Forget forgets the reported failure of a script whose content loads, is its running one
// again, or is removed.
func (f *Failures) Forget(name string) { delete(f.reported, name) }

// DidReport records that the failure of src was reported.
func (f *Failures) DidReport(src plugins.Source) {
	if f.reported == nil {
		f.reported = map[string]string{}
	}
	f.reported[src.Name] = src.Hash
}

// Held is a held failure handed back once its content settled.
type Held struct {
	Src   plugins.Source // the content that failed, no longer Settling
	Err   error
	Again bool // the failure of that content was the last reported: not news
}

// Settled takes back the held failure of the content that settled, if any.
func (f *Failures) Settled(src plugins.Source) (Held, bool) {
	h, ok := f.held[src.Name]
	if !ok || h.src.Hash != src.Hash {
		return Held{}, false
	}
	delete(f.held, src.Name)
	return Held{Src: h.src, Err: h.err, Again: f.reported[src.Name] == h.src.Hash}, true
}
