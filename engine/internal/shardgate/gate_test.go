package shardgate

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/sharding"
)

// fakeRing owns the keys that start with "mine/"; its Run ends when cancelled.
type fakeRing struct {
	gains   []sharding.Gain
	running atomic.Bool
}

func (f *fakeRing) Begin(key string) (func(), bool) { return func() {}, f.Handles(key) }
func (f *fakeRing) Handles(key string) bool         { return len(key) > 5 && key[:5] == "mine/" }
func (f *fakeRing) Accept(key string) bool          { return f.Handles(key) }
func (f *fakeRing) Valid() bool                     { return true }
func (f *fakeRing) Owner(key string) string {
	if f.Handles(key) {
		return "self"
	}
	return "other"
}
func (f *fakeRing) Identity() string           { return "self" }
func (f *fakeRing) Gains() <-chan struct{}     { return nil }
func (f *fakeRing) TakeGains() []sharding.Gain { g := f.gains; f.gains = nil; return g }
func (f *fakeRing) Target() sharding.View {
	return sharding.View{Ring: sharding.NewRing("other", "self")}
}
func (f *fakeRing) Active() sharding.View      { return f.Target() }
func (f *fakeRing) Targets() <-chan struct{}   { return nil }
func (f *fakeRing) SetListed(string)           {}
func (f *fakeRing) Leave(context.Context) bool { return true }
func (f *fakeRing) Status() sharding.Status {
	return sharding.Status{Identity: "self", Lease: "ring-self", Members: []string{"other", "self"}, Generation: 3, Valid: true}
}
func (f *fakeRing) Run(ctx context.Context) {
	f.running.Store(true)
	defer f.running.Store(false)
	<-ctx.Done()
}

// An unsharded runner (nil *Gate) owns every key; a sharded one only its own.
func TestGateOwnership(t *testing.T) {
	t.Parallel()
	sharded := On(&fakeRing{}, "ns", slog.New(slog.DiscardHandler))
	cases := []struct {
		name          string
		g             *Gate
		key           string
		handles       bool
		other, status string
	}{
		{"unsharded", nil, "theirs/a", true, "", ""},
		{"sharded, its key", sharded, "mine/a", true, "", "ns/ring-self"},
		{"sharded, another's key", sharded, "theirs/a", false, "other", "ns/ring-self"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			end, ok := c.g.Begin(c.key)
			if ok != c.handles || c.g.Handles(c.key) != c.handles {
				t.Errorf("Begin ok %v, Handles %v; want %v", ok, c.g.Handles(c.key), c.handles)
			}
			if ok {
				end()
			}
			if got := c.g.OtherOwner(c.key); got != c.other {
				t.Errorf("OtherOwner = %q, want %q", got, c.other)
			}
			if has, _ := c.g.TakeGains(); !c.g.Valid() || has != nil {
				t.Errorf("Valid %v, gains %v: want valid and no gain", c.g.Valid(), has != nil)
			}
			st := c.g.Status()
			if (st == nil) != (c.status == "") || st != nil && (st.Lease != c.status || len(st.Members) != 2 || st.Generation != 3) {
				t.Errorf("Status = %+v, want lease %q", st, c.status)
			}
		})
	}
}

// Start's stop joins the member's goroutine.
func TestGateStart(t *testing.T) {
	t.Parallel()
	ring := &fakeRing{}
	g := On(ring, "ns", slog.New(slog.DiscardHandler))
	stop := g.Start()
	deadline := time.Now().Add(10 * time.Second)
	for !ring.running.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the member never ran")
		}
		time.Sleep(time.Millisecond)
	}
	stop()
	if ring.running.Load() {
		t.Fatal("the member still runs after stop returned")
	}
	(*Gate)(nil).Start()() // unsharded: nothing to stop
}
