package enginemetrics

import "github.com/prometheus/client_golang/prometheus"

// Outbox is the series of the scripts' outboxes (ctx.outbox, docs/once.md): deliveries by
// result, and the messages by state as this replica last listed them.
type Outbox struct {
	deliveries *prometheus.CounterVec
	messages   *prometheus.GaugeVec
}

// The results of a delivery, as jsinformer_outbox_deliveries_total counts them.
const (
	OutboxDelivered   = "delivered"   // deliver returned
	OutboxRetry       = "retry"       // deliver threw; the message is due again after its backoff
	OutboxFailed      = "failed"      // deliver threw on its last attempt: the message is given up
	OutboxInterrupted = "interrupted" // a claim found after its lease: its outcome is unknown
	OutboxUnrecorded  = "unrecorded"  // delivered, but the done record was not written: it may be delivered again
)

// NewOutbox makes the outbox series and registers them on reg, if not nil.
func NewOutbox(reg prometheus.Registerer) *Outbox {
	m := &Outbox{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jsinformer_outbox_deliveries_total",
			Help: "Deliveries of outbox messages (ctx.outbox.send) by this replica, by script and result: delivered, retry (failed, due again after backoff), failed (given up after its attempts), interrupted (a crashed delivery found after its lease), unrecorded (delivered, but its done record could not be written).",
		}, []string{"script", "result"}),
		messages: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "jsinformer_outbox_messages",
			Help: "Outbox messages kept in the store by script and state (pending, claimed, done, failed), as this replica last listed them.",
		}, []string{"script", "state"}),
	}
	if reg != nil {
		reg.MustRegister(m.deliveries, m.messages)
	}
	return m
}

// Delivered counts one delivery of script's with result (OutboxDelivered and the others).
func (m *Outbox) Delivered(script, result string) {
	if m != nil {
		m.deliveries.WithLabelValues(script, result).Inc()
	}
}

// Listed records how many messages script's outbox holds by state.
func (m *Outbox) Listed(script string, counts map[string]int) {
	if m == nil {
		return
	}
	for _, state := range []string{"pending", "claimed", "done", "failed"} {
		m.messages.WithLabelValues(script, state).Set(float64(counts[state]))
	}
}
