package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// Defaults of Options and Limits; the runner's flags document the same numbers.
const (
	DefaultShards         = 16
	DefaultWindow         = 20 * time.Millisecond
	DefaultRequestTimeout = 10 * time.Second
	DefaultMaxKeyBytes    = 512
	DefaultMaxValueBytes  = 64 << 10
	DefaultMaxKeys        = 10000
	DefaultMaxTotalBytes  = 8 << 20
	// DefaultRetention is how long a deleted script's store is kept (retention.go).
	DefaultRetention = 7 * 24 * time.Hour
	// MaxShardBytes bounds one shard's document, below the API server's 1 MiB per ConfigMap.
	MaxShardBytes = 900 << 10
)

// Limits bound what one script may store; zero fields take the defaults above.
type Limits struct {
	MaxKeyBytes   int // bytes of one key
	MaxValueBytes int // bytes of one value's JSON
	MaxKeys       int // keys per script
	MaxTotalBytes int // key plus value bytes per script
}

// Options configure a Store; zero fields take the defaults above.
type Options struct {
	// Namespace holds the store's ConfigMaps; required.
	Namespace string
	// Shards is the number of ConfigMaps per script. Changing it on a store that holds data
	// makes keys hash to other shards: existing keys then read as absent.
	Shards int
	// Window is the least time between two updates of one shard: a write to a shard updated
	// less than Window ago waits for the rest of it, and the writes queued meanwhile go in one
	// update; a write to a shard idle for longer goes at once.
	Window time.Duration
	// RequestTimeout bounds each API call of a flush (flushes outlive their callers' contexts).
	RequestTimeout time.Duration
	Limits         Limits
	// Retention is how long the store of a script that is gone is kept before the runner
	// deletes it (retention.go); zero keeps it until deleted by hand (`runner store delete`).
	Retention time.Duration
	// Now is the clock TTLs are measured with; time.Now when nil.
	Now func() time.Time
}

func (o Options) withDefaults() (Options, error) {
	if o.Namespace == "" {
		return o, errors.New("configure store: a namespace is required")
	}
	o.Shards = orInt(o.Shards, DefaultShards)
	o.Window = orDuration(o.Window, DefaultWindow)
	o.RequestTimeout = orDuration(o.RequestTimeout, DefaultRequestTimeout)
	o.Limits.MaxKeyBytes = orInt(o.Limits.MaxKeyBytes, DefaultMaxKeyBytes)
	o.Limits.MaxValueBytes = orInt(o.Limits.MaxValueBytes, DefaultMaxValueBytes)
	o.Limits.MaxKeys = orInt(o.Limits.MaxKeys, DefaultMaxKeys)
	o.Limits.MaxTotalBytes = orInt(o.Limits.MaxTotalBytes, DefaultMaxTotalBytes)
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Shards > 1000 {
		return o, fmt.Errorf("configure store: %d shards is more than 1000", o.Shards)
	}
	return o, nil
}

func orInt(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

func orDuration(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}

// Store is the stores of every script of one runner. Scope gives one script's.
type Store struct {
	client corev1client.ConfigMapsGetter
	opts   Options
	log    *slog.Logger

	// closing is cancelled by Close: flushes waiting out their window write at once.
	closing context.Context
	close   context.CancelFunc

	mu     sync.Mutex
	scopes map[string]*Scope
	closed bool
	// flushes are the flush goroutines in progress, which the Store owns: Close waits for them.
	flushes sync.WaitGroup
}

// New returns a Store keeping its ConfigMaps in opts.Namespace through client: a clientset's
// CoreV1(), or Memory() for a store in this process only.
func New(client corev1client.ConfigMapsGetter, opts Options, log *slog.Logger) (*Store, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	closing, cancel := context.WithCancel(context.Background())
	return &Store{client: client, opts: opts, log: log, scopes: map[string]*Scope{}, closing: closing, close: cancel}, nil
}

// Scope returns the store of the script named script, the same *Scope for the same name.
func (s *Store) Scope(script string) *Scope {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.scopes[script]
	if sc == nil {
		sc = newScope(s, script, false)
		s.scopes[script] = sc
	}
	return sc
}

// Close refuses new writes and waits for the flushes in progress, which write what is
// queued without waiting out their window: those writes are then on the API server or failed.
func (s *Store) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.close()
	s.flushes.Wait()
}

// startFlush starts sh's flush goroutine unless the Store is closed; false when it is.
func (s *Store) startFlush(sh *shard) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.flushes.Add(1)
	go func() {
		defer s.flushes.Done()
		sh.flushLoop()
	}()
	return true
}
