package status

import (
	"sync"
	"sync/atomic"
)

// CallCounts are one handler's counters, written by whoever calls it.
type CallCounts struct {
	Calls, Errors, Timeouts, Stuck atomic.Uint64
}

// Counts holds every script's handler counters, by script then handler. The zero value is
// ready; safe for concurrent use.
type Counts struct {
	mu       sync.Mutex
	byScript map[string]map[string]*CallCounts
}

// Get returns the counters of one handler of one script, made at the first call.
func (c *Counts) Get(script, handler string) *CallCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byScript == nil {
		c.byScript = map[string]map[string]*CallCounts{}
	}
	byHandler := c.byScript[script]
	if byHandler == nil {
		byHandler = map[string]*CallCounts{}
		c.byScript[script] = byHandler
	}
	cc := byHandler[handler]
	if cc == nil {
		cc = &CallCounts{}
		byHandler[handler] = cc
	}
	return cc
}

// Forget drops a script's counters, when it is unloaded.
func (c *Counts) Forget(script string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byScript, script)
}

// Snapshot returns a script's counters by handler.
func (c *Counts) Snapshot(script string) map[string]HandlerCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]HandlerCounts, len(c.byScript[script]))
	for h, cc := range c.byScript[script] {
		out[h] = HandlerCounts{Calls: cc.Calls.Load(), Errors: cc.Errors.Load(), Timeouts: cc.Timeouts.Load(), Stuck: cc.Stuck.Load()}
	}
	return out
}
