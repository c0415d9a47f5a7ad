package web

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jsinformer/jsinformer/inspection"
)

// hub holds the latest snapshot and wakes the /ui/events streams when it changes.
type hub struct {
	mu      sync.Mutex
	latest  []byte
	changed chan struct{} // closed and replaced on each change
	clients atomic.Int64
	done    chan struct{} // closed when Run returns: streams end
}

func newHub() *hub { return &hub{changed: make(chan struct{}), done: make(chan struct{})} }

// publish stores data and wakes the streams, unless it equals the latest.
func (h *hub) publish(data []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if bytes.Equal(data, h.latest) {
		return
	}
	h.latest = data
	close(h.changed)
	h.changed = make(chan struct{})
}

func (h *hub) current() ([]byte, <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.latest, h.changed
}

// keepAlive is how often an idle stream gets a comment, so proxies keep it open.
const keepAlive = 15 * time.Second

// events streams snapshots: a "hello" event with what this request may do, then "snapshot"
// events, the first as soon as one exists.
func (p *Page) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported by this connection", http.StatusInternalServerError)
		return
	}
	p.hub.clients.Add(1)
	defer p.hub.clients.Add(-1)
	p.wake()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	rc := exemptFromTimeouts(w)
	w.WriteHeader(http.StatusOK)
	canAct := p.opts.CanAct == nil || p.opts.CanAct(r)
	if _, err := fmt.Fprintf(w, "event: hello\ndata: {\"canAct\":%t}\n\n", canAct); err != nil {
		return
	}
	flusher.Flush()
	ticker := time.NewTicker(keepAlive)
	defer ticker.Stop()
	var sent []byte
	for {
		data, changed := p.hub.current()
		if data != nil && !bytes.Equal(data, sent) {
			_ = rc.SetWriteDeadline(time.Now().Add(streamWrite))
			if _, err := fmt.Fprintf(w, "event: snapshot\ndata: %s\n\n", data); err != nil {
				return
			}
			flusher.Flush()
			sent = data
		}
		select {
		case <-r.Context().Done():
			return
		case <-p.hub.done:
			return
		case <-changed:
		case <-ticker.C:
			_ = rc.SetWriteDeadline(time.Now().Add(streamWrite))
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			flusher.Flush()
		}
	}
}

// streamWrite bounds each write of a stream: a client that stops reading frees its goroutine.
const streamWrite = time.Minute

// exemptFromTimeouts lifts the debug server's read and write deadlines for a long-lived
// stream (its ReadTimeout, once past, would cancel the request's context); the caller then
// sets a write deadline before each write.
func exemptFromTimeouts(w http.ResponseWriter) *http.ResponseController {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Now().Add(streamWrite))
	return rc
}

// wake asks Run for a snapshot now (a new client should not wait a whole interval).
func (p *Page) wake() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// Run feeds the rates from the trace stream and rebuilds the snapshot every Interval while a
// page is connected, until ctx is done.
func (p *Page) Run(ctx context.Context) error {
	defer close(p.hub.done)
	var records <-chan inspection.TraceRecord // nil (never ready) with recording off
	if sub, err := p.opts.Source.Subscribe(inspection.TailFilter{}); err != nil {
		p.opts.Logger.Info("web page: no call rates", "error", err.Error())
	} else {
		defer sub.Close()
		records = sub.Records()
		p.recording.Store(true)
	}
	ticker := time.NewTicker(p.opts.Interval)
	defer ticker.Stop()
	changed := p.opts.Source.StatusChanged()
	for {
		select {
		case <-ctx.Done():
			return nil
		case rec := <-records:
			p.rates.add(rec)
		case <-changed: // a load, a state change: push it now, not at the next tick
			changed = p.opts.Source.StatusChanged()
			p.refresh()
		case <-ticker.C:
			p.refresh()
		case <-p.kick:
			p.refresh()
		}
	}
}

func (p *Page) refresh() {
	if p.hub.clients.Load() == 0 {
		return
	}
	data, err := p.snapshotJSON()
	if err != nil {
		p.opts.Logger.Warn("web page: build snapshot", "error", err.Error())
		return
	}
	p.hub.publish(data)
}
