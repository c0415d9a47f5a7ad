package debugapi_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/debugapi"
	"github.com/jsinformer/jsinformer/inspection"
)

// fakeSource answers every view empty; its subscriptions are fakeSubs the test feeds.
type fakeSource struct {
	mu   sync.Mutex
	subs []*fakeSub
}

func (f *fakeSource) Explain(context.Context, string, string, int) (inspection.Explanation, error) {
	return inspection.Explanation{}, nil
}
func (f *fakeSource) Queue(string) (inspection.QueueView, error) { return inspection.QueueView{}, nil }
func (f *fakeSource) Cache(string, string, inspection.IndexQuery) (inspection.CacheView, error) {
	return inspection.CacheView{}, nil
}
func (f *fakeSource) Indexes(string, string) (inspection.IndexesView, error) {
	return inspection.IndexesView{}, nil
}
func (f *fakeSource) Retry(string, string) error  { return nil }
func (f *fakeSource) Pause(string) (bool, error)  { return true, nil }
func (f *fakeSource) Resume(string) (bool, error) { return true, nil }
func (f *fakeSource) Replay(context.Context, string, string, string, bool) (inspection.TraceRecord, error) {
	return inspection.TraceRecord{}, nil
}

func (f *fakeSource) Subscribe(inspection.TailFilter) (inspection.Subscription, error) {
	s := &fakeSub{ch: make(chan inspection.TraceRecord, 1024)}
	f.mu.Lock()
	f.subs = append(f.subs, s)
	f.mu.Unlock()
	return s, nil
}

// open counts the subscriptions not closed yet.
func (f *fakeSource) open() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, s := range f.subs {
		if !s.closed.Load() {
			n++
		}
	}
	return n
}

func (f *fakeSource) last() *fakeSub {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.subs[len(f.subs)-1]
}

type fakeSub struct {
	ch     chan inspection.TraceRecord
	closed atomic.Bool
}

func (s *fakeSub) Records() <-chan inspection.TraceRecord { return s.ch }
func (s *fakeSub) Missed() int64                          { return 0 }
func (s *fakeSub) Close()                                 { s.closed.Store(true) }

// serve runs a Server with opts on a free loopback port until the test ends; it returns
// the address.
func serve(t *testing.T, opts debugapi.Options) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- debugapi.New(opts).Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return l.Addr().String()
}

// denyAll answers every request 401, as the delegating authorizer does without a token.
type denyAll struct{}

func (denyAll) Allow(w http.ResponseWriter, _ *http.Request) bool {
	http.Error(w, "Unauthorized", http.StatusUnauthorized)
	return false
}

// waitFor polls cond until it holds or 10s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// syncWriter serializes writes to w (a log shared by goroutines).
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
