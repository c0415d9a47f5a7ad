package engine

import "sync"

// pauses are the scripts paused through the debug API (Pause, Resume). A paused script's
// worker holds its next event, in order, and its reconcile workers hold their next key, until
// it is resumed; events keep queueing meanwhile. Pauses belong to the script name, so a reload
// while paused stays paused (the new version does not sync until resumed). Safe for
// concurrent use.
type pauses struct {
	mu    sync.Mutex
	gates map[string]chan struct{} // closed on resume
}

func newPauses() *pauses { return &pauses{gates: map[string]chan struct{}{}} }

// pause reports false when name was already paused.
func (p *pauses) pause(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gates[name] != nil {
		return false
	}
	p.gates[name] = make(chan struct{})
	return true
}

// resume reports false when name was not paused.
func (p *pauses) resume(name string) bool {
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

func (p *pauses) paused(name string) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gates[name] != nil
}

// wait blocks while name is paused; false when abort closed first.
func (p *pauses) wait(name string, abort <-chan struct{}) bool {
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
