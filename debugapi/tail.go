package debugapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/jsinformer/jsinformer/engine"
)

// keepAlive is how often an idle tail stream gets a comment line, so proxies (kubectl
// port-forward) keep it open and a client notices a dead connection.
const keepAlive = 15 * time.Second

// tail streams trace records as server-sent events: "event: record" with the record's JSON as
// data and its seq as id. A client that falls more than the engine's buffer behind misses
// records; the next record then comes after an "event: missed" whose data is {"missed": N},
// the total so far. The stream ends when the client goes or the server stops.
func (s *Server) tail(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	sub, err := s.opts.Source.Subscribe(engine.TailFilter{Script: q.Get("script"), Resource: q.Get("resource"), Object: q.Get("object")})
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
	w.WriteHeader(http.StatusOK)
	_, _ = fmt.Fprint(w, ": tail started\n\n")
	flusher.Flush()
	ticker := time.NewTicker(keepAlive)
	defer ticker.Stop()
	var reported int64
	for {
		select {
		case <-r.Context().Done():
			return
		case <-ticker.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
		case rec := <-sub.Records():
			if missed := sub.Missed(); missed > reported {
				reported = missed
				if _, err := fmt.Fprintf(w, "event: missed\ndata: {\"missed\":%d}\n\n", missed); err != nil {
					return
				}
			}
			data, err := json.Marshal(rec)
			if err != nil {
				return
			}
			if _, err := fmt.Fprintf(w, "event: record\nid: %d\ndata: %s\n\n", rec.Seq, data); err != nil {
				return
			}
		}
		flusher.Flush()
	}
}
