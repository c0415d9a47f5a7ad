package debugapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/jsinformer/jsinformer/inspection"
)

// keepAlive is how often an idle tail stream gets a comment line, so proxies (kubectl
// port-forward) keep it open and a client notices a dead connection.
const keepAlive = 15 * time.Second

// tail streams trace records as server-sent events: "event: record" with the record's JSON as
// data and its seq as id. A client that falls more than the engine's buffer behind misses
// records; the next record then comes after an "event: missed" whose data is {"missed": N},
// the total so far. The stream ends when the client goes or the server stops.
func (s *Server) tail(w http.ResponseWriter, r *http.Request) {
	if !s.tails.take() {
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("too many tail streams (at most %d at once); end one and try again", s.tails.max))
		return
	}
	defer s.tails.put()
	q := r.URL.Query()
	sub, err := s.opts.Source.Subscribe(inspection.TailFilter{Script: q.Get("script"), Resource: q.Get("resource"), Object: q.Get("object")})
	if err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	defer sub.Close()
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "streaming is not supported by this connection")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	stream := newStreaming(w, s.opts.Limits.StreamWrite)
	w.WriteHeader(http.StatusOK)
	_, _ = fmt.Fprint(w, ": tail started\n\n")
	flusher.Flush()
	ticker := time.NewTicker(keepAlive)
	defer ticker.Stop()
	st := tailStream{w: w}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-ticker.C:
			stream.extend()
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
		case rec := <-sub.Records():
			stream.extend()
			if !st.writeQueued(sub, rec) {
				return
			}
		}
		flusher.Flush()
	}
}

// flushBatch bounds how many records one flush carries, so a client still sees a steady
// stream while the engine produces faster than it reads.
const flushBatch = 256

// tailStream writes records of one subscription; reported is the missed count already sent.
type tailStream struct {
	w        http.ResponseWriter
	reported int64
}

// writeQueued writes rec and the records already queued behind it (up to flushBatch), so a
// busy stream costs one flush per batch rather than per record. False: the client is gone.
func (st *tailStream) writeQueued(sub inspection.Subscription, rec inspection.TraceRecord) bool {
	for i := 0; ; i++ {
		if !st.write(sub, rec) {
			return false
		}
		if i == flushBatch-1 {
			return true
		}
		select {
		case rec = <-sub.Records():
		default:
			return true
		}
	}
}

func (st *tailStream) write(sub inspection.Subscription, rec inspection.TraceRecord) bool {
	if missed := sub.Missed(); missed > st.reported {
		st.reported = missed
		if _, err := fmt.Fprintf(st.w, "event: missed\ndata: {\"missed\":%d}\n\n", missed); err != nil {
			return false
		}
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return false
	}
	_, err = fmt.Fprintf(st.w, "event: record\nid: %d\ndata: %s\n\n", rec.Seq, data)
	return err == nil
}
