package dynamicinformer

import (
	"bytes"
	"context"
	"reflect"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/jsinformer/jsinformer/internal/unstructuredjson"
)

// pages lists one informer's objects, page by page, through NewClient's client, and sends
// the request for a page before the reflector asks for it: as soon as a page's body is read,
// its continue token (unstructuredjson.ListContinue) gives the next page's request, which
// is sent while this page is decoded and handed over. The apiserver then prepares page n+1
// while the runner decodes page n, instead of each side waiting on the other; at most two
// page bodies are held at once.
//
// A prefetched page is used only for a call with exactly the options it was fetched with
// (client-go's pager asks for the next page with the token, no resourceVersion and the
// same limit); any other call cancels it. Its error, if it failed, is that call's error.
//
// Goroutines: each prefetch runs on one goroutine, started by list and owned by pages: the
// next list call takes its result or cancels it and waits for it, and stop, called once the
// informer has stopped, cancels and waits for the last one.
type pages struct {
	c   *client
	key Key

	mu      sync.Mutex
	next    *prefetch
	stopped bool
}

// prefetch is one page request running ahead of the reflector.
type prefetch struct {
	opts   metav1.ListOptions // the request, as the reflector will ask for it
	cancel context.CancelFunc
	done   chan struct{} // closed when buf or err is set
	buf    *bytes.Buffer
	err    error
}

// list returns the page opts ask for, prefetched or fetched now, and prefetches the next.
func (p *pages) list(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	buf, err := p.take(ctx, opts)
	if err != nil {
		return nil, err
	}
	if token, ok := unstructuredjson.ListContinue(buf.Bytes()); ok && token != "" {
		next := opts
		next.Continue, next.ResourceVersion, next.ResourceVersionMatch = token, "", ""
		p.start(ctx, next)
	}
	return p.c.decodePage(buf)
}

// take returns the prefetched body for opts, or fetches it; a prefetch for other options is
// cancelled.
func (p *pages) take(ctx context.Context, opts metav1.ListOptions) (*bytes.Buffer, error) {
	p.mu.Lock()
	pf := p.next
	p.next = nil
	p.mu.Unlock()
	if pf != nil {
		if reflect.DeepEqual(pf.opts, opts) {
			return pf.wait(ctx)
		}
		pf.abandon()
	}
	return p.fetch(ctx, opts)
}

func (p *pages) fetch(ctx context.Context, opts metav1.ListOptions) (*bytes.Buffer, error) {
	return p.c.fetchPage(ctx, p.key.GVR, p.key.Namespace, opts)
}

// start fetches the page opts ask for on a goroutine of its own, unless pages is stopped.
func (p *pages) start(ctx context.Context, opts metav1.ListOptions) {
	ctx, cancel := context.WithCancel(ctx)
	pf := &prefetch{opts: opts, cancel: cancel, done: make(chan struct{})}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped || p.next != nil {
		cancel()
		return
	}
	p.next = pf
	go func() {
		defer close(pf.done)
		pf.buf, pf.err = p.fetch(ctx, opts)
	}()
}

// stop cancels the prefetch still running, if any, waits for it, and lets no other start.
// Called once the informer's goroutines have returned.
func (p *pages) stop() {
	p.mu.Lock()
	pf := p.next
	p.next, p.stopped = nil, true
	p.mu.Unlock()
	if pf != nil {
		pf.abandon()
	}
}

// wait returns the prefetched body once it is read, or ctx's error (abandoning it).
func (pf *prefetch) wait(ctx context.Context) (*bytes.Buffer, error) {
	select {
	case <-pf.done:
		pf.cancel()
		return pf.buf, pf.err
	case <-ctx.Done():
		pf.abandon()
		return nil, ctx.Err()
	}
}

// abandon cancels the prefetch, waits for its goroutine and releases its buffer.
func (pf *prefetch) abandon() {
	pf.cancel()
	<-pf.done
	if pf.buf != nil {
		putPageBuffer(pf.buf)
	}
}
