package memcluster

// history keeps the last max watch events, oldest first, for watches that resume from a
// resourceVersion. It is a ring: once full, each write overwrites the oldest event, so keeping
// it costs O(1) per write however long it is. It grows as writes come, up to max, rather than
// being allocated at its bound. Guarded by the cluster's mutex.
type history struct {
	max   int
	buf   []event
	start int // the oldest event's index once the ring is full
}

func (h *history) add(ev event) {
	if len(h.buf) < h.max {
		h.buf = append(h.buf, ev)
		return
	}
	h.buf[h.start] = ev
	h.start = (h.start + 1) % len(h.buf)
}

// oldest is the oldest event kept.
func (h *history) oldest() (event, bool) {
	if len(h.buf) == 0 {
		return event{}, false
	}
	return h.buf[h.start], true
}

// each calls f on every event kept, oldest first.
func (h *history) each(f func(event)) {
	for i := range h.buf {
		f(h.buf[(h.start+i)%len(h.buf)])
	}
}
