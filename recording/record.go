package recording

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/dynamicinformer"
)

// Config says what to record and where.
type Config struct {
	Client    dynamic.Interface
	Discovery discovery.DiscoveryInterface
	// Resources are named as with --gvr; Namespace and the selectors apply to each, as the
	// runner's flags do.
	Resources     []string
	Namespace     string
	LabelSelector string
	FieldSelector string
	Out           *Writer
	// Logger receives progress: each resource's initial list recorded; default discards.
	Logger *slog.Logger
}

// Record records the initial list of every resource, then every change, until ctx is done.
// A write that fails ends it with that error.
func Record(ctx context.Context, cfg Config) error {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if len(cfg.Resources) == 0 {
		return errors.New("record: name at least one resource")
	}
	resolver := dynamicinformer.NewResolver(cfg.Discovery, cfg.Logger)
	factory := dynamicinformer.NewFactory(cfg.Client, dynamicinformer.Options{Logger: cfg.Logger})
	defer factory.Shutdown()
	var loggers sync.WaitGroup
	defer loggers.Wait() // runs after cancel: they end with ctx
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var handles []*dynamicinformer.Informer
	defer func() {
		for _, h := range handles {
			h.Release()
		}
	}()
	for _, name := range cfg.Resources {
		h, reg, err := subscribe(factory, resolver, cfg, name, cancel)
		if err != nil {
			return err
		}
		handles = append(handles, h)
		loggers.Go(func() { logSynced(ctx, cfg.Logger, h.Key(), reg) })
	}
	<-ctx.Done()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// subscribe starts (or shares) the informer of one resource and registers a recorder on it.
func subscribe(factory *dynamicinformer.Factory, resolver *dynamicinformer.Resolver, cfg Config, name string,
	fail context.CancelCauseFunc) (*dynamicinformer.Informer, cache.ResourceEventHandlerRegistration, error) {
	res, err := resolver.Resolve(name)
	if err != nil {
		return nil, nil, fmt.Errorf("record: %w", err)
	}
	key := dynamicinformer.Key{GVR: res.GVR, LabelSelector: cfg.LabelSelector, FieldSelector: cfg.FieldSelector}
	if res.Namespaced {
		key.Namespace = cfg.Namespace
	}
	h, err := factory.Acquire(key)
	if err != nil {
		return nil, nil, fmt.Errorf("record: %w", err)
	}
	rec := &recorder{resource: res.String(), out: cfg.Out, fail: fail}
	reg, err := h.Informer().AddEventHandler(rec.handler())
	if err != nil {
		h.Release()
		return nil, nil, fmt.Errorf("record %s: %w", key, err)
	}
	return h, reg, nil
}

// logSynced says when a resource's initial list is recorded; it ends with ctx at the latest.
func logSynced(ctx context.Context, logger *slog.Logger, key dynamicinformer.Key, reg cache.ResourceEventHandlerRegistration) {
	select {
	case <-reg.HasSyncedChecker().Done():
		logger.Info("initial list recorded; recording changes", "informer", key.String())
	case <-ctx.Done():
	}
}

// recorder writes one resource's events.
type recorder struct {
	resource string
	out      *Writer
	fail     context.CancelCauseFunc
	once     sync.Once
}

func (r *recorder) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) { r.write(Added, obj, initial, false) },
		UpdateFunc: func(_, obj any) {
			r.write(Modified, obj, false, false)
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				r.write(Deleted, tomb.Obj, false, true)
				return
			}
			r.write(Deleted, obj, false, dynamicinformer.FinalStateUnknown(obj))
		},
	}
}

func (r *recorder) write(typ string, obj any, initial, unknown bool) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u == nil {
		return // a tombstone without a last state: nothing to replay
	}
	ev := Event{Time: time.Now().UTC(), Type: typ, Initial: initial, FinalStateUnknown: unknown, Resource: r.resource, Object: u.Object}
	if err := r.out.Write(ev); err != nil {
		r.once.Do(func() { r.fail(fmt.Errorf("record: %w", err)) })
	}
}
