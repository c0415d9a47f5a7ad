package inspect

import (
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/jsinformer/jsinformer/inspection"
)

// KeyBook is what the queue view knows of a reconciler's keys, beside the workqueue (which
// tells nothing of its content): a key enters when queued and leaves when a run succeeds
// without requeueAfter, or the reconciler gives up on it. A key given up on moves to the
// dropped keys: the last inspection.DroppedKeys, with their last error. Safe for concurrent
// use.
type KeyBook struct {
	mu      sync.Mutex
	keys    map[string]*keyEntry
	dropped []inspection.DroppedKey // oldest first, at most inspection.DroppedKeys
}

// keyEntry is one key of the book: its state, and when its running run started.
type keyEntry struct {
	inspection.KeyState
	started time.Time
}

// NewKeyBook returns an empty book.
func NewKeyBook() *KeyBook { return &KeyBook{keys: map[string]*keyEntry{}} }

// Queued notes key queued because of reason.
func (b *KeyBook) Queued(key, reason string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.keys[key]
	if k == nil {
		k = &keyEntry{KeyState: inspection.KeyState{Key: key, FirstQueued: time.Now()}}
		b.keys[key] = k
	}
	k.Reason = reason
}

// Started notes a run of key starting.
func (b *KeyBook) Started(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.keys[key]
	if k == nil { // queued before the book knew it (a retry's AddAfter)
		k = &keyEntry{KeyState: inspection.KeyState{Key: key, FirstQueued: time.Now(), Reason: "queued"}}
		b.keys[key] = k
	}
	k.Running, k.started, k.NextRetry = true, time.Now(), nil
}

// Finished records a run's outcome: err with the attempt it was (gaveUp: the last), a
// requeue after requeueAfter, or done.
func (b *KeyBook) Finished(key string, err error, attempt int, gaveUp bool, requeueAfter time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.keys[key]
	if k == nil {
		return
	}
	k.Running = false
	switch {
	case err != nil && !gaveUp:
		at := time.Now().Add(backoffEstimate(attempt))
		k.Attempts, k.LastError, k.NextRetry, k.Reason = attempt, err.Error(), &at, "retry after error"
	case requeueAfter > 0:
		at := time.Now().Add(requeueAfter)
		k.Attempts, k.LastError, k.NextRetry, k.Reason = 0, "", &at, "requeueAfter "+requeueAfter.String()
	case err != nil: // gave up
		b.drop(inspection.DroppedKey{Key: key, Dropped: time.Now(), Attempts: attempt, LastError: err.Error()})
		delete(b.keys, key)
	default:
		delete(b.keys, key)
	}
}

// Snapshot lists the keys, sorted, with running times as of now.
func (b *KeyBook) Snapshot(now time.Time) []inspection.KeyState {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]inspection.KeyState, 0, len(b.keys))
	for _, k := range b.keys {
		c := k.KeyState
		if c.Running {
			c.RunningForMs = float64(now.Sub(k.started).Microseconds()) / 1000
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// drop remembers a key given up on, forgetting the oldest beyond inspection.DroppedKeys.
func (b *KeyBook) drop(d inspection.DroppedKey) {
	if len(b.dropped) == inspection.DroppedKeys {
		b.dropped = slices.Delete(b.dropped, 0, 1)
	}
	b.dropped = append(b.dropped, d)
}

// Dropped lists the keys given up on, newest first.
func (b *KeyBook) Dropped() []inspection.DroppedKey {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := slices.Clone(b.dropped)
	slices.Reverse(out)
	return out
}

// Has reports whether the book holds key.
func (b *KeyBook) Has(key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.keys[key] != nil
}

// backoffEstimate is client-go's default per-item controller backoff after attempt failures.
func backoffEstimate(attempt int) time.Duration {
	d := 5 * time.Millisecond * time.Duration(math.Pow(2, float64(min(attempt-1, 20))))
	return min(d, 1000*time.Second)
}
