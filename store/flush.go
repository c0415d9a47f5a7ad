package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// op is one queued write and, once done is closed, its result.
type op struct {
	key    string
	value  []byte
	del    bool
	ttl    time.Duration
	expect *int64
	// readable marks the value fit to show (SetOptions.Readable).
	readable bool

	res  result
	done chan struct{}
}

type result struct {
	version int64 // Set: the key's new version
	existed bool  // Delete: the key existed
	err     error
}

// submit queues o for the shard's next update and waits until that update is acknowledged
// (or failed) or ctx ends; in the latter case o's outcome is unknown.
func (sh *shard) submit(ctx context.Context, o *op) (result, error) {
	o.done = make(chan struct{})
	sh.mu.Lock()
	sh.pending = append(sh.pending, o)
	start := !sh.flushing
	sh.flushing = true
	sh.mu.Unlock()
	if start && !sh.sc.st.startFlush(sh) {
		sh.fail(sh.take(), ErrClosed)
		sh.mu.Lock()
		sh.flushing = false
		sh.mu.Unlock()
	}
	select {
	case <-o.done:
		return o.res, o.res.err
	case <-ctx.Done():
		return result{}, fmt.Errorf("wait for the store write (it may still be applied): %w", ctx.Err())
	}
}

// take empties the queue, returning what it held.
func (sh *shard) take() []*op {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	batch := sh.pending
	sh.pending = nil
	return batch
}

func (sh *shard) fail(batch []*op, err error) {
	for _, o := range batch {
		o.res = result{err: err}
		close(o.done)
	}
}

// flushLoop is the shard's flush goroutine: it writes what is queued, then again after each
// window while writes keep coming, and ends when the queue is empty. A write to a shard idle
// for a window or more goes at once: only writes that come while the shard is busy wait, so
// a lone write costs one round trip and a stream of them at most one update per window.
// Owned by the Store (startFlush, Close).
func (sh *shard) flushLoop() {
	sh.mu.Lock()
	wait := sh.sc.st.opts.Window - time.Since(sh.lastFlush)
	sh.mu.Unlock()
	window := time.NewTimer(max(wait, 0))
	defer window.Stop()
	for {
		select {
		case <-window.C:
		case <-sh.sc.st.closing.Done():
		}
		sh.mu.Lock()
		batch := sh.pending
		sh.pending = nil
		if len(batch) == 0 {
			sh.flushing = false
			sh.mu.Unlock()
			return
		}
		sh.mu.Unlock()
		sh.flush(batch)
		sh.mu.Lock()
		sh.lastFlush = time.Now()
		sh.mu.Unlock()
		window.Reset(sh.sc.st.opts.Window)
	}
}

// maxAttempts bounds the read-apply-update rounds of one flush that lose to other writers.
const maxAttempts = 20

// flush applies batch to the shard's ConfigMap, reading again and reapplying after each
// Conflict, and then tells every op its result.
func (sh *shard) flush(batch []*op) {
	ctx, cancel := context.WithTimeout(context.Background(), sh.sc.st.opts.RequestTimeout)
	defer cancel()
	defer sh.sc.reserve(sh.idx, usage{})
	err := sh.sc.ensureLoaded(ctx)
	for attempt := 0; err == nil; attempt++ {
		var retry bool
		retry, err = sh.attempt(ctx, batch)
		if !retry {
			break
		}
		if attempt+1 == maxAttempts {
			err = fmt.Errorf("update store configmap %s: lost to other writers %d times", sh.name, maxAttempts)
			break
		}
		sh.backoff(ctx, attempt)
	}
	if err != nil {
		sh.sc.st.log.Warn("store write failed", "script", sh.sc.script, "configmap", sh.name, "writes", len(batch), "err", err)
		sh.fail(batch, err)
		return
	}
	for _, o := range batch {
		close(o.done)
	}
}

// attempt is one read-apply-update round; retry reports that the update lost to another
// writer and the round must be run again.
func (sh *shard) attempt(ctx context.Context, batch []*op) (retry bool, err error) {
	cm, err := sh.get(ctx)
	if err != nil {
		return false, err
	}
	doc, err := decodeDocument(cm)
	if err != nil {
		return false, err
	}
	if !sh.sc.apply(sh.idx, doc, batch) {
		return false, nil // nothing to write: every op failed its check or changed nothing
	}
	written, err := sh.write(ctx, cm, doc)
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("update store configmap %s: %w", sh.name, err)
	}
	sh.mu.Lock()
	sh.seenRV, sh.seen = written.ResourceVersion, doc
	sh.mu.Unlock()
	sh.sc.setUsage(sh.idx, doc.usage(sh.sc.st.opts.Now()))
	return false, nil
}

// backoff waits a little, more after each lost round, jittered so that replicas spread out.
func (sh *shard) backoff(ctx context.Context, attempt int) {
	d := time.Duration(min(attempt+1, 10)) * 5 * time.Millisecond
	d += rand.N(d) //nolint:gosec // jitter
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
