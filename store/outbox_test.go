package store_test

import (
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jsinformer/jsinformer/store"
)

// fakeNow is a clock a test moves by hand.
type fakeNow struct{ ms atomic.Int64 }

func (f *fakeNow) now() time.Time      { return time.UnixMilli(f.ms.Load()) }
func (f *fakeNow) add(d time.Duration) { f.ms.Add(d.Milliseconds()) }
func newFakeNow() *fakeNow             { f := &fakeNow{}; f.ms.Store(1_000_000); return f }
func memoryStore(t *testing.T, clock *fakeNow) *store.Store {
	t.Helper()
	s, err := store.New(store.Memory(), store.Options{Namespace: "ns", Now: clock.now, Window: time.Millisecond}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// A key is sent once whatever the number of Sends, delivered once claimed and done, and
// kept for Keep: a Send after that records it anew.
func TestOutboxSendClaimDone(t *testing.T) {
	t.Parallel()
	clock := newFakeNow()
	ob := memoryStore(t, clock).Outbox("n.js", store.OutboxPolicy{Keep: time.Hour})
	ctx := t.Context()
	for i, want := range []bool{true, false, false} {
		if got, err := ob.Send(ctx, "k", json.RawMessage(`{"n":1}`), nil); err != nil || got != want {
			t.Fatalf("send #%d = %v, %v; want %v", i, got, err, want)
		}
	}
	l, err := ob.Due(ctx)
	if err != nil || len(l.Due) != 1 || l.Counts[store.OutboxPending] != 1 {
		t.Fatalf("due = %+v %v; want [k], one pending", l, err)
	}
	c, err := ob.Claim(ctx, "k", "a")
	if err != nil || c == nil || c.Attempts != 1 || string(c.Message) != `{"n":1}` {
		t.Fatalf("claim = %+v, %v; want attempt 1 of the message", c, err)
	}
	if again, err := ob.Claim(ctx, "k", "b"); again != nil || err != nil {
		t.Fatalf("second claim within the lease = %+v, %v; want none", again, err)
	}
	if err := ob.Done(ctx, c); err != nil {
		t.Fatal(err)
	}
	if l, _ := ob.Due(ctx); len(l.Due) != 0 || !l.Next.IsZero() || l.Counts[store.OutboxDone] != 1 {
		t.Fatalf("due after done = %+v; want nothing, ever, and one done", l)
	}
	if got, _ := ob.Send(ctx, "k", json.RawMessage(`1`), nil); got {
		t.Fatal("a done key was sent again")
	}
	clock.add(time.Hour + time.Second)
	if got, _ := ob.Send(ctx, "k", json.RawMessage(`1`), nil); !got {
		t.Fatal("a key past Keep was not sent anew")
	}
}

// Failures back off, doubling, until the attempts are spent: then the record is failed.
func TestOutboxRetriesThenFails(t *testing.T) {
	t.Parallel()
	clock := newFakeNow()
	ob := memoryStore(t, clock).Outbox("n.js", store.OutboxPolicy{Attempts: 3, Backoff: time.Second, MaxBackoff: 3 * time.Second})
	ctx := t.Context()
	if _, err := ob.Send(ctx, "k", json.RawMessage(`1`), nil); err != nil {
		t.Fatal(err)
	}
	for i, wait := range []time.Duration{time.Second, 2 * time.Second} {
		c, err := ob.Claim(ctx, "k", "a")
		if err != nil || c == nil {
			t.Fatalf("claim #%d = %v, %v", i+1, c, err)
		}
		final, next, err := ob.Fail(ctx, c, "answered 500", false)
		if err != nil || final || !next.Equal(clock.now().Add(wait)) {
			t.Fatalf("fail #%d = %v %v %v; want a retry after %s", i+1, final, next, err, wait)
		}
		if c, _ := ob.Claim(ctx, "k", "a"); c != nil {
			t.Fatalf("claimed #%d before its backoff", i+1)
		}
		clock.add(wait)
	}
	c, _ := ob.Claim(ctx, "k", "a")
	if final, _, err := ob.Fail(ctx, c, "answered 500", false); !final || err != nil {
		t.Fatalf("third failure final = %v, %v; want final", final, err)
	}
	e, _, _ := ob.Get(ctx, "k")
	if e.State != store.OutboxFailed || e.LastError != "answered 500" || e.Attempts != 3 {
		t.Fatalf("record = %+v; want failed after 3 attempts with the last error", e.OutboxRecord)
	}
	if l, _ := ob.Due(ctx); len(l.Failed) != 1 || l.Failed[0].Key != "k" || len(l.Due) != 0 || !l.Next.IsZero() {
		t.Fatalf("listing = %+v; want k failed, nothing due", l)
	}
}

// A claim past its lease is an interrupted delivery: delivered again with Interrupted under
// Redeliver, failed without delivery otherwise; the first claimant can no longer record.
func TestOutboxInterrupted(t *testing.T) {
	t.Parallel()
	for _, redeliver := range []bool{true, false} {
		clock := newFakeNow()
		ob := memoryStore(t, clock).Outbox("n.js", store.OutboxPolicy{Lease: 10 * time.Second, Redeliver: redeliver})
		ctx := t.Context()
		_, _ = ob.Send(ctx, "k", json.RawMessage(`1`), nil)
		first, _ := ob.Claim(ctx, "k", "a")
		clock.add(10 * time.Second)
		c, err := ob.Claim(ctx, "k", "b")
		if err != nil || c == nil || c.Abandoned == redeliver || !c.Interrupted {
			t.Fatalf("redeliver %v: claim after the lease = %+v, %v", redeliver, c, err)
		}
		if redeliver && c.Attempts != 2 {
			t.Fatalf("redelivery is attempt %d; want 2", c.Attempts)
		}
		if err := ob.Done(ctx, first); !errors.Is(err, store.ErrClaimLost) {
			t.Fatalf("the first claimant's done = %v; want ErrClaimLost", err)
		}
	}
}

// Of replicas racing to claim one due record, exactly one gets it.
func TestOutboxOneClaimWins(t *testing.T) {
	t.Parallel()
	clock := newFakeNow()
	s := memoryStore(t, clock)
	ctx := t.Context()
	_, _ = s.Outbox("n.js", store.OutboxPolicy{}).Send(ctx, "k", json.RawMessage(`1`), nil)
	var won atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if c, err := s.Outbox("n.js", store.OutboxPolicy{}).Claim(ctx, "k", "x"); err == nil && c != nil {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d claims won; want 1", won.Load())
	}
}

// A message too large to leave its record room to grow is refused at Send, a limit error for
// that call; a huge error is kept cut, so the failed record still fits.
func TestOutboxLimits(t *testing.T) {
	t.Parallel()
	clock := newFakeNow()
	s, err := store.New(store.Memory(), store.Options{Namespace: "ns", Now: clock.now, Window: time.Millisecond,
		Limits: store.Limits{MaxValueBytes: 4 << 10}}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	ob, ctx := s.Outbox("n.js", store.OutboxPolicy{Attempts: 1}), t.Context()
	big := json.RawMessage(`"` + strings.Repeat("x", 3<<10) + `"`)
	if _, err := ob.Send(ctx, "big", big, nil); !errors.Is(err, store.ErrLimit) {
		t.Fatalf("send of a 3 KiB message with a 4 KiB limit = %v; want ErrLimit", err)
	}
	if _, err := ob.Send(ctx, "k", json.RawMessage(`"`+strings.Repeat("x", 1<<10)+`"`), nil); err != nil {
		t.Fatal(err)
	}
	c, _ := ob.Claim(ctx, "k", "a")
	if final, _, err := ob.Fail(ctx, c, strings.Repeat("é", 10<<10), false); err != nil || !final {
		t.Fatalf("fail with a 20 KiB error = %v, %v; want recorded, final", final, err)
	}
	e, _, _ := ob.Get(ctx, "k")
	if len(e.LastError) > 1<<10 || !strings.HasSuffix(e.LastError, "…") || !utf8.ValidString(e.LastError) {
		t.Fatalf("kept error of %d bytes; want at most 1 KiB, cut on a rune", len(e.LastError))
	}
}
