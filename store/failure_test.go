package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/store"
)

// syncBuffer is a log destination safe for the flush goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A write the API server refuses (here: the namespace does not exist) fails the call with the
// server's error, and neither the error nor the log carries the value.
func TestFailedWriteKeepsTheValueOut(t *testing.T) {
	t.Parallel()
	c, _ := client(t)
	var logs syncBuffer
	s, err := store.New(c.CoreV1(), store.Options{Namespace: "no-such-namespace"}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const secret = "hunter2-do-not-log"
	_, err = s.Scope("s").Set(t.Context(), "password", json.RawMessage(`"`+secret+`"`), store.SetOptions{})
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("set in a missing namespace: %v; want the server's NotFound", err)
	}
	if strings.Contains(err.Error(), secret) || strings.Contains(logs.String(), secret) {
		t.Fatalf("the value leaked:\nerr: %v\nlog: %s", err, logs.String())
	}
	if !strings.Contains(logs.String(), "store write failed") {
		t.Fatalf("the failure is not logged: %s", logs.String())
	}
}

// A caller whose context ends while its write waits out its shard's window gets the context's error; after Close,
// writes fail with ErrClosed and nothing is left running.
func TestCancelAndClose(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	s, _ := newStore(t, store.Options{Namespace: ns, Window: time.Hour})
	// The shard's first write goes at once (it was idle for a window); the next waits the hour.
	if _, err := s.Scope("c").Set(t.Context(), "k", json.RawMessage(`0`), store.SetOptions{}); err != nil {
		t.Fatalf("first set: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := s.Scope("c").Set(ctx, "k", json.RawMessage(`1`), store.SetOptions{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("set with a context ending in the window: %v; want DeadlineExceeded", err)
	}
	s2, _ := newStore(t, store.Options{Namespace: ns})
	s2.Close()
	if _, err := s2.Scope("c").Set(t.Context(), "k", json.RawMessage(`1`), store.SetOptions{}); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("set after Close: %v; want ErrClosed", err)
	}
}
