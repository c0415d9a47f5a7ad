package scripting

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// memOutbox records sends in memory: a key once.
type memOutbox struct {
	mu    sync.Mutex
	sent  map[string]string
	about map[string]*ObjectRef
}

func (m *memOutbox) Send(_ context.Context, key string, message []byte, about *ObjectRef) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.sent[key]; ok {
		return false, nil
	}
	m.sent[key], m.about[key] = string(message), about
	return true, nil
}

const outboxScript = `export default {
  outbox: {
    attempts: 4, backoff: "2s", maxBackoff: 60000, keep: "24h", interrupted: "fail",
    deliver(message, ctx) {
      globalThis.out = { message, delivery: ctx.delivery, self: this.attempts };
      if (message.fail) throw new Error("receiver answered 500");
    },
  },
  onAdd(obj, ctx) {
    globalThis.out = {
      first: ctx.outbox.send("k/" + obj.metadata.name, { name: obj.metadata.name }, { about: obj }),
      again: ctx.outbox.send("k/" + obj.metadata.name, { name: "other" }),
      delivery: ctx.delivery,
    };
  },
};`

// send records a key once and reports the repeat; deliver gets the recorded message,
// ctx.delivery and the outbox as this; the options are read with their units.
func TestOutboxSendAndDeliver(t *testing.T) {
	t.Parallel()
	ob := &memOutbox{sent: map[string]string{}, about: map[string]*ObjectRef{}}
	s := newTestScript(t, "o.js", outboxScript, Options{Outbox: ob})
	want := OutboxSpec{Attempts: 4, Backoff: 2 * time.Second, MaxBackoff: time.Minute, Keep: 24 * time.Hour, AtMostOnce: true}
	if got := s.Definition().Outbox; got == nil || *got != want {
		t.Fatalf("outbox spec = %+v; want %+v", got, want)
	}
	if err := s.OnAdd(sample(), Event{}); err != nil {
		t.Fatal(err)
	}
	if got := outJSON(t, s); got != `{"first":true,"again":false}` {
		t.Errorf("handler out = %s", got)
	}
	key := "k/web"
	if ob.sent[key] != `{"name":"web"}` || ob.about[key] == nil || ob.about[key].Kind != "Deployment" || ob.about[key].Name != "web" {
		t.Fatalf("recorded %q about %+v", ob.sent[key], ob.about[key])
	}
	d := Delivery{Key: key, Attempt: 2, Attempts: 4, Interrupted: true}
	if err := s.Deliver([]byte(ob.sent[key]), d, Event{}); err != nil {
		t.Fatal(err)
	}
	wantOut := `{"message":{"name":"web"},"delivery":{"key":"` + key + `","attempt":2,"attempts":4,"interrupted":true},"self":4}`
	if got := outJSON(t, s); got != wantOut {
		t.Errorf("deliver out = %s\nwant %s", got, wantOut)
	}
	err := s.Deliver([]byte(`{"fail":true}`), d, Event{})
	if err == nil || !strings.Contains(err.Error(), "receiver answered 500") {
		t.Errorf("a throwing deliver = %v; want its error", err)
	}
}

// Without an outbox (runner without --store) or a deliver, send throws, saying what is missing;
// the definition's outbox is checked at load.
func TestOutboxRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src, want string
		opts            Options
	}{
		{"no store", outboxScript, "the outbox is not available here (start the runner with --store)", Options{}},
		{"no deliver", `export default { onAdd(o, ctx) { ctx.outbox.send("k", 1) } }`, "the definition has no outbox", Options{Outbox: &memOutbox{}}},
		{"not JSON", `export default { outbox: { deliver() {} }, onAdd(o, ctx) { ctx.outbox.send("k", () => 1) } }`, "message must be representable as JSON", Options{Outbox: &memOutbox{}}},
		{"empty key", `export default { outbox: { deliver() {} }, onAdd(o, ctx) { ctx.outbox.send("", 1) } }`, "key is required", Options{Outbox: &memOutbox{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newTestScript(t, "o.js", tt.src, tt.opts)
			if err := s.OnAdd(sample(), Event{}); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v; want %q", err, tt.want)
			}
		})
	}
	for _, tt := range []struct{ src, want string }{
		{`outbox: { attempts: 3 }`, "'outbox.deliver' must be a function"},
		{`outbox: { deliver() {}, backoff: "1ms" }`, "'outbox.backoff': 1ms is less than 100ms"},
		{`outbox: { deliver() {}, interrupted: "maybe" }`, `'outbox.interrupted' must be "redeliver" or "fail"`},
		{`outbox: { deliver() {}, attempts: 0 }`, "'attempts' must be a positive integer"},
		{`outbox: { deliver() {}, retries: 3 }`, "retries"},
	} {
		_, err := instantiate("bad.js", `export default { onAdd() {}, `+tt.src+` }`, Options{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v; want %q", tt.src, err, tt.want)
		}
	}
}
