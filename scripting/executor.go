package scripting

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultGrace is Options.Grace when it is zero.
const DefaultGrace = time.Second

// maxStuck is how many abandoned runtimes of one Script may still be running before it stops
// making new ones: each may keep a core busy until its built-in returns, so a script that
// gets stuck on every event must not multiply them.
const maxStuck = 2

// executor is the goroutine an instance's calls run on. The Script's owner hands it one call
// at a time and waits until the call ends or the watchdog declares it stuck: still running
// Grace after its deadline (the deadline interrupt stops JS within an instruction and cancels
// the context of Go callbacks, so only a Go built-in the interrupt cannot reach gets there)
// or Grace after Interrupt. A stuck call is abandoned: the owner stops waiting, the instance
// is stopped and dropped, and the goroutine ends whenever that call returns. Nothing waits
// for an abandoned executor.
//
// The owner writes call before sending on req and reads err after receiving true on done; the
// executor writes err before sending true. Those channel operations order every access.
type executor struct {
	// req carries true when a call is ready in call, false to make the goroutine return. At
	// most one call and one false are ever in it, so capacity 2 never blocks a sender; plain
	// channel operations, not selects, keep the hand-over cheap.
	req chan bool
	// done carries true when a call has ended and false when the watchdog declares it stuck;
	// false always comes first, so capacity 2 never blocks a sender. Closed when the goroutine
	// returns, which tells an owner that sent a call after Interrupt that it will not run.
	done    chan bool
	stopped atomic.Bool // set by quit, checked by the goroutine between calls
	once    sync.Once
	exited  chan struct{} // closed when the goroutine has returned

	call func(*instance) error
	err  error

	abandoned atomic.Bool
	since     time.Time     // when it was abandoned; written before quit
	stuck     *atomic.Int32 // the Script's count of abandoned executors still running
}

func newExecutor(stuck *atomic.Int32) executor {
	return executor{req: make(chan bool, 2), done: make(chan bool, 2), exited: make(chan struct{}), stuck: stuck}
}

// quit makes the goroutine return once it is idle; safe from any goroutine, idempotent.
func (x *executor) quit() {
	x.once.Do(func() {
		x.stopped.Store(true)
		x.req <- false // never blocks: see req
	})
}

// serve is the executor goroutine. It is started by Script.start and owned by the Script,
// which joins it in Close, unless it was abandoned.
func (s *instance) serve() {
	x := &s.exec
	liveRuntimes.Add(1)
	defer close(x.exited)
	defer liveRuntimes.Add(-1) // before exited closes: Close returns with the count down
	for !x.stopped.Load() && <-x.req {
		x.err = s.safely(x.call)
		x.call = nil
		x.done <- true
	}
	if x.abandoned.Load() {
		x.stuck.Add(-1)
		s.log.Warn("abandoned script runtime has finished its call",
			"stuck_for", time.Since(x.since).Round(time.Millisecond).String())
	}
	close(x.done) // the watchdog sends only during a call, and none is running
}

// safely runs call; a panic outside a call's own recovery becomes its error.
func (s *instance) safely(call func(*instance) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = s.recovered(r)
		}
	}()
	return call(s)
}

// exec runs call on in's executor and waits until it ends or the watchdog declares it stuck;
// a stuck call is abandoned with its instance.
func (s *Script) exec(in *instance, name string, call func(*instance) error) error {
	x := &in.exec
	x.call = call
	x.req <- true // never blocks: see req
	ended, open := <-x.done
	switch {
	case ended:
		return x.err
	case !open:
		return interruptedError(s.name, name)
	}
	select { // the call may have ended just as it was declared stuck
	case ended := <-x.done:
		if ended {
			return x.err
		}
	default:
	}
	s.abandon(in, name)
	return &ScriptError{File: s.name, Err: ErrStuck, Message: fmt.Sprintf(
		"%s did not stop within %s of its %s timeout (a built-in the timeout cannot interrupt); "+
			"its runtime was abandoned and the next call gets a fresh one", name, s.grace, s.timeout)}
}

// abandon drops in, whose call is stuck: it is stopped (its runtime interrupted, in case the
// built-in returns), and the next call makes a fresh instance.
func (s *Script) abandon(in *instance, name string) {
	x := &in.exec
	n := s.stuck.Add(1)
	x.since = time.Now()
	x.abandoned.Store(true)
	s.mu.Lock()
	if s.cur == in {
		s.cur = nil
	}
	s.mu.Unlock()
	in.stop()
	s.log.Error("script call stuck; abandoned its runtime", "handler", name,
		"timeout", s.timeout.String(), "grace", s.grace.String(), "stuck_runtimes", n)
}
