package engine_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/status"
)

// calls is every trace record of one engine since before it ran: what each handler call and
// reconcile run did (script, version, event, object, result, its log lines and writes), as the
// debug API's tail shows it. Tests wait on these, and on the status API, rather than on the
// runner's log text, whose wording may change. One goroutine, started by watchCalls and joined
// by the cleanup it registers, drains the engine's trace subscription into recs every 10 ms;
// find drains it too, so that it sees every record recorded before it was called.
type calls struct {
	mu   sync.Mutex
	recs []inspection.TraceRecord
	sub  inspection.Subscription
}

// watchCalls subscribes to e's trace; call it before e runs so that no record is missed.
func watchCalls(t *testing.T, e *engine.Engine) *calls {
	t.Helper()
	sub, err := e.Subscribe(inspection.TailFilter{})
	if err != nil {
		t.Fatalf("subscribe to the trace: %v", err)
	}
	c := &calls{sub: sub}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { // drains often enough that the subscription's buffer never fills
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				c.mu.Lock()
				c.drain()
				c.mu.Unlock()
			case <-stop:
				return
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		<-done
		sub.Close()
	})
	return c
}

// drain moves the records waiting in the subscription to recs; c.mu is held.
func (c *calls) drain() {
	for {
		select {
		case rec := <-c.sub.Records():
			c.recs = append(c.recs, rec)
		default:
			return
		}
	}
}

// find returns the records matching pred, oldest first; every record recorded before the call
// is among those it looks at.
func (c *calls) find(pred func(inspection.TraceRecord) bool) []inspection.TraceRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drain()
	var out []inspection.TraceRecord
	for _, r := range c.recs {
		if pred(r) {
			out = append(out, r)
		}
	}
	return out
}

// waitFor polls until n records match pred, and returns them. It fails at once when the
// subscription missed records, since the one waited for may be among them.
func (c *calls) waitFor(t *testing.T, what string, n int, pred func(inspection.TraceRecord) bool) []inspection.TraceRecord {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if got := c.find(pred); len(got) >= n {
			return got
		}
		if missed := c.sub.Missed(); missed > 0 {
			t.Fatalf("waiting for %d× %s: the trace subscription missed %d records", n, what, missed)
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %d× %s; trace so far:\n%s", n, what, c.dump())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// complete fails t when the subscription missed records, so that a count of find is exact.
func (c *calls) complete(t *testing.T) {
	t.Helper()
	if missed := c.sub.Missed(); missed > 0 {
		t.Fatalf("the trace subscription missed %d records; counts would be wrong", missed)
	}
}

func (c *calls) dump() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, r := range c.recs {
		b.WriteString(recordString(r) + "\n")
	}
	return b.String()
}

func recordString(r inspection.TraceRecord) string {
	logs, _ := json.Marshal(r.Logs)
	return fmt.Sprintf("%s@%s %s %s initial=%v handler=%s result=%s attempt=%d error=%q logs=%s",
		r.Script, r.Version, r.Event, r.Object, r.Initial, r.Handler, r.Result, r.Attempt, r.Error, logs)
}

// call is what a trace record must show; empty fields match any record.
type call struct {
	Script, Version, Event, Object, Handler, Result string
	Initial                                         *bool
	// Logged, when set, is a log line the call wrote with Attrs among its fields (values as
	// fmt prints them): the output of the test's own script, tied to the call that made it.
	Logged string
	Attrs  map[string]string
}

func (w call) match(r inspection.TraceRecord) bool {
	switch {
	case w.Script != "" && r.Script != w.Script, w.Version != "" && r.Version != w.Version,
		w.Event != "" && r.Event != w.Event, w.Object != "" && r.Object != w.Object,
		w.Handler != "" && r.Handler != w.Handler, w.Result != "" && r.Result != w.Result,
		w.Initial != nil && r.Initial != *w.Initial:
		return false
	}
	return w.Logged == "" || len(w.lines(r)) > 0
}

// lines are the log lines of r that w.Logged and w.Attrs select.
func (w call) lines(r inspection.TraceRecord) []inspection.LogLine {
	var out []inspection.LogLine
	for _, l := range r.Logs {
		if l.Message == w.Logged && attrsHave(l.Attrs, w.Attrs) {
			out = append(out, l)
		}
	}
	return out
}

func attrsHave(got map[string]any, want map[string]string) bool {
	for k, v := range want {
		g, ok := attr(got, k)
		if !ok || fmt.Sprint(g) != v {
			return false
		}
	}
	return true
}

// attr is attribute key of a log line, looked up in its groups too: a script's fields are
// the group "attrs".
func attr(attrs map[string]any, key string) (any, bool) {
	if v, ok := attrs[key]; ok {
		return v, true
	}
	for _, v := range attrs {
		if group, ok := v.(map[string]any); ok {
			if v, ok := attr(group, key); ok {
				return v, true
			}
		}
	}
	return nil, false
}

// initial is a call's Initial field.
func initial(b bool) *bool { return &b }

// logAttr is attribute key of the first log line msg of r, as fmt prints it ("" when absent).
func logAttr(r inspection.TraceRecord, msg, key string) string {
	for _, l := range r.Logs {
		if l.Message == msg {
			if v, ok := attr(l.Attrs, key); ok {
				return fmt.Sprint(v)
			}
		}
	}
	return ""
}

// handlerErrors sums the failed calls the state API counts for script's handlers named (every
// handler when none is): what the runner's "failed" log lines report, by number.
func handlerErrors(r *runner, script string, handlers ...string) uint64 {
	s, _ := r.engine.Status().Script(script)
	var n uint64
	for name, c := range s.Handlers {
		if len(handlers) == 0 || slices.Contains(handlers, name) {
			n += c.Errors
		}
	}
	return n
}

// waitInFlight waits until the queue view shows script's handler worker running a call on
// object: a call that has begun and not returned (the trace records it only once it has).
func waitInFlight(t *testing.T, r *runner, script, object string) inspection.CallInFlight {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		q, err := r.engine.Queue(script)
		if err == nil {
			for _, s := range q.Scripts {
				if s.InFlight != nil && s.InFlight.Object == object {
					return *s.InFlight
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s's call on %s to be in flight; queue %+v (err %v)", script, object, q, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lastLogged is attribute key of the newest log line msg of script's calls ("" when none).
func (c *calls) lastLogged(script, msg, key string) string {
	recs := c.find(call{Script: script, Logged: msg}.match)
	if len(recs) == 0 {
		return ""
	}
	return logAttr(recs[len(recs)-1], msg, key)
}

// waitRunning waits until the queue view shows the version hash of script reconciling key
// (any version when hash is "", any key when key is "").
func waitRunning(t *testing.T, e *engine.Engine, script, hash, key string) {
	t.Helper()
	running := func(k inspection.KeyState) bool { return k.Running && (key == "" || k.Key == key) }
	deadline := time.Now().Add(30 * time.Second)
	for {
		q, err := e.Queue(script)
		for _, s := range q.Scripts {
			if (hash == "" || s.Version == hash) && slices.ContainsFunc(s.Keys, running) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s@%s to reconcile %q; queue %+v (err %v)", script, hash, key, q, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// linesOf is the log lines of recs in the order they were written (each line's time), for
// tests of which calls ran at the same time: a call's record comes only once it has returned.
func linesOf(recs []inspection.TraceRecord) []inspection.LogLine {
	var out []inspection.LogLine
	for _, rec := range recs {
		out = append(out, rec.Logs...)
	}
	slices.SortStableFunc(out, func(a, b inspection.LogLine) int { return a.Time.Compare(b.Time) })
	return out
}

// served reports whether the state API remembers a load of script's content hash that served
// (loaded or reloaded).
func served(r *runner, script, hash string) bool {
	s, _ := r.engine.Status().Script(script)
	return slices.ContainsFunc(s.Loads, func(l status.LoadStatus) bool {
		return l.Hash == hash && (l.Result == status.LoadLoaded || l.Result == status.LoadReloaded)
	})
}

// lineAttr is attribute key of log line l, as fmt prints it ("" when absent).
func lineAttr(l inspection.LogLine, key string) string {
	if v, ok := attr(l.Attrs, key); ok {
		return fmt.Sprint(v)
	}
	return ""
}
