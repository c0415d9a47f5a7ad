package dynamicinformer

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
)

// Options configure a Factory.
type Options struct {
	// Resync is the informers' resync period; zero disables resyncs.
	Resync time.Duration
	// Logger receives informer start/stop and the watch errors the reflector sees (debug).
	Logger *slog.Logger
	// Backoff paces the retries of failing lists and watches; zero fields take DefaultBackoff's.
	Backoff Backoff
	// OnHealth, when set, is told every health transition of every informer: called on the
	// informer's own goroutines, in order for one informer; it must not block.
	OnHealth func(HealthEvent)
	// Remind is the least time between two StillFailing events of one informer; default 1m.
	Remind time.Duration
	// StreamingLists makes informers take their initial state from a streaming list (a watch
	// that sends every object first, client-go's WatchListClient) where the server supports
	// it, instead of one LIST decoded as it arrives (listwatch.go says why that is the default).
	StreamingLists bool
	// OnCached, when set, is called with every object as it enters an informer's cache (after
	// the transform), on the informer's goroutine; for checks that cached objects are never
	// changed afterwards, as tests of the engine make.
	OnCached func(*unstructured.Unstructured)
}

// Factory starts, shares and stops dynamic informers by reference count.
type Factory struct {
	client dynamic.Interface
	opts   Options

	// support is what its informers learnt of the server's streaming lists (streaming.go).
	support *streamingSupport

	mu       sync.Mutex
	entries  map[Key]*entry
	shutdown bool
	wg       sync.WaitGroup
}

type entry struct {
	informer cache.SharedIndexInformer
	health   *tracker
	shard    *partition // nil when not partitioned
	bytes    *atomic.Uint64
	refs     int
	cancel   context.CancelFunc
}

// NewFactory returns a Factory that builds informers on client.
func NewFactory(client dynamic.Interface, opts Options) *Factory {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.Backoff = opts.Backoff.withDefaults()
	if opts.Remind <= 0 {
		opts.Remind = time.Minute
	}
	return &Factory{client: client, opts: opts, entries: map[Key]*entry{}, support: &streamingSupport{logger: opts.Logger}}
}

// Acquire returns a handle on the running informer for key, starting it when it is the first.
// The caller must Release the handle.
func (f *Factory) Acquire(key Key) (*Informer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shutdown {
		return nil, fmt.Errorf("acquire informer %s: factory is shut down", key)
	}
	if err := key.Partition.Validate(); err != nil {
		return nil, fmt.Errorf("acquire informer %s: %w", key, err)
	}
	e, ok := f.entries[key]
	if !ok {
		var err error
		if e, err = f.start(key); err != nil {
			return nil, err
		}
		f.entries[key] = e
	}
	e.refs++
	return &Informer{key: key, informer: e.informer, factory: f}, nil
}

// start builds and runs an informer; called with f.mu held.
func (f *Factory) start(key Key) (*entry, error) {
	health := newTracker(key, f.opts.OnHealth, f.opts.Remind)
	logger := f.opts.Logger.With("informer", key.String())
	shard := newPartition(key.Partition, logger, f.probe(key))
	bytes := new(atomic.Uint64)
	lw := &listWatch{inner: f.listWatch(key, shard), client: f.client, health: health, known: newKnown(),
		backoff: f.opts.Backoff, streaming: f.opts.StreamingLists, support: f.support, shard: shard, bytes: bytes}
	inf := cache.NewSharedIndexInformerWithOptions(lw, &unstructured.Unstructured{}, cache.SharedIndexInformerOptions{
		ResyncPeriod:      f.opts.Resync,
		Indexers:          cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		ObjectDescription: key.String(),
	})
	if err := inf.SetTransform(f.transform); err != nil {
		return nil, fmt.Errorf("set transform on informer %s: %w", key, err)
	}
	if err := inf.SetWatchErrorHandlerWithContext(watchErrorLogger(logger)); err != nil {
		return nil, fmt.Errorf("set watch error handler on informer %s: %w", key, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.wg.Go(func() { inf.RunWithContext(ctx) })
	logger.Debug("informer started")
	return &entry{informer: inf, health: health, shard: shard, bytes: bytes, cancel: cancel}, nil
}

// transform is StripManagedFields, then Options.OnCached.
func (f *Factory) transform(obj any) (any, error) {
	out, err := StripManagedFields(obj)
	if u, ok := out.(*unstructured.Unstructured); ok && err == nil && f.opts.OnCached != nil {
		f.opts.OnCached(u)
	}
	return out, err
}

// listWatch lists and watches key's objects with the dynamic client; NewClient's lists
// decode the response while it arrives. A partitioned informer's requests carry its
// shardSelector, and its lists drop the items outside the partition as they are decoded.
func (f *Factory) listWatch(key Key, shard *partition) *cache.ListWatch {
	ri := f.client.Resource(key.GVR).Namespace(key.Namespace)
	tweak := func(o *metav1.ListOptions) {
		o.LabelSelector, o.FieldSelector = key.LabelSelector, key.FieldSelector
		shard.tweak(o)
	}
	list := func(ctx context.Context, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
		out, err := ri.List(ctx, o)
		if err == nil {
			shard.filterList(out)
		}
		return out, err
	}
	if c, ok := f.client.(*client); ok {
		list = func(ctx context.Context, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
			return c.list(ctx, key.GVR, key.Namespace, o, shard)
		}
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			tweak(&o)
			return list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			tweak(&o)
			return ri.Watch(ctx, o)
		},
	}
}

// probe lists one object of key with its shardSelector: the answer's shardInfo tells whether
// the API server filters, which a streaming list's answer does not (partition.go).
func (f *Factory) probe(key Key) func(context.Context) (runtime.Object, error) {
	return func(ctx context.Context) (runtime.Object, error) {
		o := metav1.ListOptions{LabelSelector: key.LabelSelector, FieldSelector: key.FieldSelector,
			ShardSelector: key.Partition.Selector(), Limit: 1}
		return f.client.Resource(key.GVR).Namespace(key.Namespace).List(ctx, o)
	}
}

// watchErrorLogger logs what reaches the reflector despite listWatch's retries: relists after
// "410 Gone" and requests it passes on. Health transitions are reported through OnHealth.
func watchErrorLogger(logger *slog.Logger) cache.WatchErrorHandlerWithContext {
	return func(_ context.Context, _ *cache.Reflector, err error) {
		logger.Debug("list/watch ended", "error", err.Error())
	}
}

// release drops one reference and stops the informer with the last.
func (f *Factory) release(key Key) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.entries[key]
	if !ok {
		return
	}
	if e.refs--; e.refs == 0 {
		e.cancel()
		delete(f.entries, key)
		f.opts.Logger.Debug("informer stopped", "informer", key.String())
	}
}

// Active returns the keys of the running informers and their reference counts.
func (f *Factory) Active() map[Key]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[Key]int, len(f.entries))
	for k, e := range f.entries {
		out[k] = e.refs
	}
	return out
}

// Health reports the health of every running informer.
func (f *Factory) Health() []Health {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Health, 0, len(f.entries))
	for k, e := range f.entries {
		h := e.health.snapshot()
		h.Shard = e.shard.status()
		h.BytesReceived = e.bytes.Load()
		if e.shard == nil && !k.Partition.IsZero() {
			h.Shard = ShardStatus{Partition: k.Partition, Mode: ShardOff, Reason: "the partition holds every slice: nothing to filter"}
		}
		out = append(out, h)
	}
	return out
}

// Shutdown stops every informer and waits until their goroutines have returned.
func (f *Factory) Shutdown() {
	f.mu.Lock()
	f.shutdown = true
	for k, e := range f.entries {
		e.cancel()
		delete(f.entries, k)
	}
	f.mu.Unlock()
	f.wg.Wait()
}
