package plugins

import "time"

// debouncer is a restartable one-shot timer for Run's select loop: every kick
// pushes the deadline back, so it fires once the folder has been quiet for d.
// It relies on Go >= 1.23 timer semantics (Reset and Stop discard a pending
// tick), which the module's go directive selects.
type debouncer struct {
	d time.Duration
	t *time.Timer
}

func newDebouncer(d time.Duration) *debouncer {
	t := time.NewTimer(d)
	t.Stop()
	return &debouncer{d: d, t: t}
}

// kick (re)starts the quiet period.
func (b *debouncer) kick() { b.t.Reset(b.d) }

// fired delivers one tick per quiet period that ran to the end.
func (b *debouncer) fired() <-chan time.Time { return b.t.C }

func (b *debouncer) stop() { b.t.Stop() }
