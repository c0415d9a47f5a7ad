package dynamicinformer

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
)

// listWatch is the ListerWatcher of one informer. It retries failing lists and watches itself,
// with Backoff, and hands the reflector only what the reflector must act on: success, "410
// Gone" (relist), requests the server cannot serve as asked (fall back, or give up), and the
// informer's own cancellation. It reports every call to the informer's health tracker, keeps
// known in step with what the reflector was handed, and wraps each watch in a proxy
// (watchproxy.go) that relists without the reflector's backoff.
//
// Its methods run on the informer's reflector goroutine; each watch it opens has one proxy
// goroutine, owned by that watch: it ends when the watch is stopped or its stream ends.
type listWatch struct {
	inner   cache.ListerWatcherWithContext
	client  any // the dynamic client, asked whether it supports streaming lists
	health  *tracker
	known   *known
	backoff Backoff
	// streaming: initial lists are streaming lists where the client and server support them.
	streaming bool
	// support is what the factory learnt of the server's streaming lists (streaming.go).
	support *streamingSupport
	// shard filters a partitioned informer's objects (partition.go); nil for others.
	shard *partition
	// bytes counts the response bodies of its requests (bytes.go).
	bytes *atomic.Uint64
}

// ListWithContext lists, retrying transient failures until the list succeeds or ctx ends.
func (lw *listWatch) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	var out runtime.Object
	ctx = withByteCounter(ctx, lw.bytes)
	opts = initialListOptions(opts)
	err := lw.retry(ctx, func() (err error) {
		out, err = lw.inner.ListWithContext(ctx, opts)
		return err
	})
	if err != nil {
		return nil, err
	}
	if opts.Continue == "" { // later pages belong to the same list
		lw.known.reset()
		lw.health.listed()
		lw.shard.answered(out)
	}
	if list, ok := out.(*unstructured.UnstructuredList); ok {
		lw.known.addList(list)
	}
	return out, nil
}

// WatchWithContext opens a watch, retrying transient failures until it opens or ctx ends.
// The watch's proxy reopens it with the same context, hence the same byte counter.
func (lw *listWatch) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	ctx = withByteCounter(ctx, lw.bytes)
	w, err := lw.open(ctx, opts)
	if err != nil {
		return nil, err
	}
	pending := false
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		lw.known.reset() // the reflector replaces its state with this stream's
		lw.health.listed()
	} else {
		pending = lw.health.watched()
	}
	return observe(ctx, lw, opts, w, pending), nil
}

// open opens a watch, retrying transient failures until it opens or ctx ends. A watch from a
// resourceVersion the server no longer has ("410 Gone" as the request's answer rather than as
// the stream's first event) opens as a stream of that one error, so the proxy relists.
func (lw *listWatch) open(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	streamingList := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	if streamingList && lw.support.isRefused() {
		return nil, errStreamingRefused
	}
	if streamingList {
		lw.shard.beforeStreamingList(ctx)
	}
	var w watch.Interface
	err := lw.retry(ctx, func() (err error) {
		w, err = lw.inner.WatchWithContext(ctx, opts)
		return err
	})
	if streamingList && isStreamingRefused(err) {
		lw.support.noteRefusal(err)
	}
	var status apierrors.APIStatus
	if err != nil && isPlain(opts) && (apierrors.IsResourceExpired(err) || apierrors.IsGone(err)) && errors.As(err, &status) {
		gone := watch.NewFakeWithChanSize(1, false)
		st := status.Status()
		gone.Error(&st)
		return gone, nil
	}
	return w, err
}

// isPlain reports whether opts ask for a watch that resumes from a resourceVersion, not a
// streaming list.
func isPlain(opts metav1.ListOptions) bool {
	return opts.ResourceVersion != "" && (opts.SendInitialEvents == nil || !*opts.SendInitialEvents)
}

// IsWatchListSemanticsUnSupported tells the reflector not to use streaming lists, unless
// they were asked for and the client supports them.
func (lw *listWatch) IsWatchListSemanticsUnSupported() bool {
	return !lw.streaming || lw.support.isRefused() || watchlist.DoesClientNotSupportWatchListSemantics(lw.client)
}

// initialListOptions makes the reflector's lists from scratch consistent reads in one
// response. The reflector's first list asks for resourceVersion "0" (any version, so that
// the apiserver's watch cache serves it) with a limit of 500, which the cache ignores for
// "0"; after "410 Gone" it asks for "" (the latest) with that limit, which the apiserver
// serves page by page from a cache snapshot, or from etcd once compaction has removed the
// snapshots of a quiet resource (every continuation decodes its page from etcd: twice the
// apiserver's CPU of one response, measured). resourceVersion "" without a limit is served
// from the watch cache, consistent (ConsistentListFromCache, Kubernetes 1.31 and later), in
// one response, which the client decodes as it arrives, never holding it whole
// (listbody.go). Lists from a known resourceVersion and continuations are left as they are.
func initialListOptions(opts metav1.ListOptions) metav1.ListOptions {
	if (opts.ResourceVersion == "0" || opts.ResourceVersion == "") && opts.Continue == "" && opts.ResourceVersionMatch == "" {
		opts.ResourceVersion, opts.Limit = "", 0
	}
	return opts
}

// retry calls call until it succeeds, fails in a way a retry cannot mend, or ctx ends.
func (lw *listWatch) retry(ctx context.Context, call func() error) error {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for attempt := 0; ; attempt++ {
		err := call()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		limit, retriable, failure := lw.classify(err)
		if failure {
			lw.health.failed(err)
		}
		if !retriable {
			return err
		}
		d := lw.backoff.delay(attempt, limit)
		if timer == nil {
			timer = time.NewTimer(d)
		} else {
			timer.Reset(d)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
	}
}

// classify says whether err is retried here and with which cap, and whether it means the
// informer is failing.
func (lw *listWatch) classify(err error) (limit time.Duration, retriable, failure bool) {
	switch {
	case isStreamingRefused(err):
		return 0, false, false // the server's WatchList is off: the reflector lists (streaming.go)
	case apierrors.IsResourceExpired(err), apierrors.IsGone(err), apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge):
		return 0, false, false // the reflector relists
	case apierrors.IsBadRequest(err), apierrors.IsInvalid(err), apierrors.IsNotAcceptable(err),
		apierrors.IsUnsupportedMediaType(err), apierrors.IsMethodNotSupported(err):
		return 0, false, true // the request itself is wrong; the reflector decides
	case apierrors.IsUnauthorized(err), apierrors.IsForbidden(err), apierrors.IsNotFound(err):
		return lw.backoff.MaxRejected, true, true
	}
	return lw.backoff.Max, true, true // unreachable, 5xx, 429, timeouts
}

// List satisfies cache.ListerWatcher; the reflector calls ListWithContext.
func (lw *listWatch) List(opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), opts)
}

// Watch satisfies cache.ListerWatcher; the reflector calls WatchWithContext.
func (lw *listWatch) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), opts)
}
