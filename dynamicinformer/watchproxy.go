package dynamicinformer

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// shortWatch is client-go's own limit: a watch that ends sooner without an event makes the
// reflector give up on it, back off and relist.
const shortWatch = time.Second

// proxy stands between the reflector and the watch streams of one informer. It passes
// events on, noting contact and recoveries, and spares the reflector the two endings that
// would make it back off (up to a minute) before listing again:
//
//   - a stream that ends at once without an event (kube-apiserver starting up) is reopened
//     from the same resourceVersion, which loses nothing;
//   - "410 Gone" (the resourceVersion is no longer served: after an apiserver restart,
//     compaction, or a long outage) is answered by a relist done here, on a streaming list:
//     the snapshot is diffed against what the reflector was handed (known) and passed on as
//     adds, updates and deletes (marked FinalStateUnknown), then its resourceVersion as a
//     bookmark. To the reflector it is one watch; its cache ends equal to the snapshot, as
//     after its own relist. If that relist fails, the "410 Gone" goes to the reflector as it
//     came, and client-go relists as usual.
//
// A stream that ends because its connection was found dead (no answer to an HTTP/2 PING: a
// hung API server, see WithConnectionHealth) marks the informer failing and ends quietly, so
// the reflector watches again at once from where it was, through a new connection, rather than
// relisting after its backoff.
//
// One goroutine, started by observe and owned by the proxy, does all of this; it ends, closing
// ResultChan, when the stream ends otherwise or Stop is called. Its requests use the proxy's
// own context, cancelled by Stop, so a stopped proxy never keeps retrying through an outage.
type proxy struct {
	lw      *listWatch
	ctx     context.Context
	cancel  context.CancelFunc
	opts    metav1.ListOptions
	out     chan watch.Event
	stop    chan struct{}
	done    chan struct{} // closed when run has returned
	once    sync.Once
	pending bool // a recovery waits for this watch's first event

	mu    sync.Mutex
	inner watch.Interface
}

type ending int

const (
	endStopped ending = iota
	endClosed         // the stream ended; the reflector watches again itself
	endShort          // the stream ended at once without an event
	endExpired        // "410 Gone"
)

func observe(ctx context.Context, lw *listWatch, opts metav1.ListOptions, w watch.Interface, pending bool) watch.Interface {
	ctx, cancel := context.WithCancel(ctx)
	p := &proxy{lw: lw, ctx: ctx, cancel: cancel, opts: opts, inner: w, pending: pending,
		out: make(chan watch.Event), stop: make(chan struct{}), done: make(chan struct{})}
	go p.run()
	return p
}

func (p *proxy) ResultChan() <-chan watch.Event { return p.out }

func (p *proxy) Stop() {
	p.once.Do(func() {
		close(p.stop)
		p.cancel()
		p.mu.Lock()
		p.inner.Stop()
		p.mu.Unlock()
	})
	<-p.done
}

// run is the proxy's goroutine. Stop waits for it to return (it only ever blocks on the
// stream, a send or a reopen, all of which end at Stop), so that the informer's Run, which
// waits for the reflector, which stops its watch, leaves no goroutine of ours behind.
func (p *proxy) run() {
	defer close(p.done)
	defer close(p.out)
	defer p.cancel()
	for {
		end, gone := p.pump()
		switch end {
		case endShort:
			if !p.reopen(p.opts) {
				return
			}
		case endExpired:
			if p.relist() {
				continue
			}
			p.send(gone) // the reflector relists itself
			return
		default:
			return
		}
	}
}

// pump passes on the current stream's events until it ends.
func (p *proxy) pump() (ending, watch.Event) {
	var settle <-chan time.Time
	if p.pending {
		timer := time.NewTimer(recoverySettle)
		defer timer.Stop()
		settle = timer.C
	}
	in, opened, heard := p.current().ResultChan(), time.Now(), false
	for {
		select {
		case ev, ok := <-in:
			switch {
			case !ok && !heard && time.Since(opened) < shortWatch:
				return endShort, ev
			case !ok:
				return endClosed, ev
			case ev.Type == watch.Error && isGone(ev):
				return endExpired, ev
			case ev.Type == watch.Error && isConnectionLost(ev):
				p.lw.health.failed(fmt.Errorf("watch: %w", apierrors.FromObject(ev.Object)))
				return endClosed, ev
			}
			heard = true
			p.lw.health.received(ev.Type == watch.Error, p.pending)
			p.pending, settle = false, nil
			if !p.lw.shard.keepEvent(ev) {
				continue // another replica's object (partition.go)
			}
			p.lw.known.apply(ev)
			if !p.send(ev) {
				return endStopped, ev
			}
		case <-settle:
			p.lw.health.settle()
			p.pending, settle = false, nil
		case <-p.stop:
			return endStopped, watch.Event{}
		}
	}
}

func isGone(ev watch.Event) bool {
	err := apierrors.FromObject(ev.Object)
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

// connectionLost is how a watch stream reports, as its last event, that its HTTP/2
// connection was closed for not answering a PING (net/http's and golang.org/x/net's message).
const connectionLost = "http2: client connection lost"

// isConnectionLost reports whether ev is client-go's error event for a stream whose
// connection was closed under it as dead; decoding failures and server errors are not.
func isConnectionLost(ev watch.Event) bool {
	err := apierrors.FromObject(ev.Object)
	return apierrors.HasStatusCause(err, clientWatchDecoding) && strings.Contains(err.Error(), connectionLost)
}

// clientWatchDecoding is the cause client-go's StreamWatcher gives a stream's read failure.
const clientWatchDecoding metav1.CauseType = "ClientWatchDecoding"

func (p *proxy) send(ev watch.Event) bool {
	select {
	case p.out <- ev:
		return true
	case <-p.stop:
		return false
	}
}

func (p *proxy) current() watch.Interface {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inner
}

// reopen replaces the stream with a new watch with opts; false when stopped or it failed.
func (p *proxy) reopen(opts metav1.ListOptions) bool {
	w, err := p.lw.open(p.ctx, opts)
	if err != nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.stop:
		w.Stop()
		return false
	default:
	}
	p.inner.Stop()
	p.inner = w
	return true
}

// relist opens a streaming list, reads its snapshot and passes on the difference; false when
// it could not, before anything was passed on.
func (p *proxy) relist() bool {
	if p.lw.support.isRefused() {
		return false // the server's WatchList is off: the reflector lists (streaming.go)
	}
	yes := true
	opts := p.opts
	opts.ResourceVersion, opts.ResourceVersionMatch = "", metav1.ResourceVersionMatchNotOlderThan
	opts.SendInitialEvents, opts.AllowWatchBookmarks = &yes, true
	if !p.reopen(opts) {
		return false
	}
	snapshot, bookmark, ok := p.snapshot()
	if !ok {
		return false
	}
	for _, ev := range p.lw.known.diff(snapshot) {
		if !p.send(ev) {
			return true // stopped: run's next pump ends at once
		}
	}
	p.lw.health.listed()
	p.pending = false
	p.opts.ResourceVersion = resourceVersion(bookmark) // where a reopened watch resumes
	p.send(bookmark)
	return true
}

func resourceVersion(ev watch.Event) string {
	if u, ok := ev.Object.(*unstructured.Unstructured); ok {
		return u.GetResourceVersion()
	}
	return ""
}

// snapshot reads a streaming list's initial events up to the bookmark that ends them.
func (p *proxy) snapshot() ([]*unstructured.Unstructured, watch.Event, bool) {
	var objs []*unstructured.Unstructured
	in := p.current().ResultChan()
	for {
		select {
		case ev, ok := <-in:
			if !ok || ev.Type == watch.Error {
				return nil, ev, false
			}
			u, isObj := ev.Object.(*unstructured.Unstructured)
			switch {
			case !isObj:
			case ev.Type == watch.Bookmark && u.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true":
				return objs, ev, true
			case ev.Type == watch.Added && p.lw.shard.keepEvent(ev):
				objs = append(objs, u)
			}
		case <-p.stop:
			return nil, watch.Event{}, false
		}
	}
}
