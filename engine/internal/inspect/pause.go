package inspect

import "sync"

// Pauses are the scripts paused through the debug API (engine.Pause, engine.Resume). A paused script's
// worker holds its next event, in order, and its reconcile workers hold their next key, until
// it is resumed; events keep queueing meanwhile. Pauses belong to the script name, so a reload
// while paused stays paused (the new version does not sync until resumed). Safe for
// concurrent use.
type Pauses struct {
	mu    sync.Mutex
	gates map[string]chan struct{} // closed on resume
}

// NewPauses returns pauses with no script paused.
func NewPauses() *Pauses { return &Pauses{gates: map[string]chan struct{}{}} }

// Pause pauses name; it reports false when name was already paused.
func (p *Pauses) Pause(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gates[name] != nil {
		return false
	}
	p.gates[name] = make(chan struct{})
	return true
}

// Resume lets name go on; it reports false when name was not paused.
func (p *Pauses) Resume(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	g := p.gates[name]
	if g == nil {
		return false
	}
	close(g)
	delete(p.gates, name)
	return true
}

// Paused reports whether name is paused; a nil Pauses pauses nothing.
func (p *Pauses) Paused(name string) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gates[name] != nil
}

// Wait blocks while name is paused; false when abort closed first. Nil-safe.
func (p *Pauses) Wait(name string, abort <-chan struct{}) bool {
	if p == nil {
		return true
	}
	p.mu.Lock()
	g := p.gates[name]
	p.mu.Unlock()
	if g == nil {
		return true
	}
	select {
	case <-g:
		return true
	case <-abort:
		return false
	}
}
