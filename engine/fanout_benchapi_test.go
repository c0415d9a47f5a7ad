package engine

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/engine/internal/fanout"
	"github.com/jsinformer/jsinformer/engine/internal/version"
)

// The engine's side of the fanout benchmarks (fanout_bench_test.go): the engine's events
// through the engine's subscriptions.

type benchRegistry = fanout.Registry[version.Event]

func benchSubscription() *version.Subscription {
	return &version.Subscription{Queue: version.NewQueue()}
}

func benchHandler(sub *version.Subscription) cache.ResourceEventHandler {
	return fanout.Handler[version.Event](sub)
}

func benchSubscribe(fs *fanout.Registry[version.Event], s *version.Subscription) (err error) {
	s.Fan, err = fs.Subscribe(s)
	if err == nil {
		s.Synced = s.Fan.Synced()
	}
	return err
}

func benchUnsubscribe(fs *fanout.Registry[version.Event], s *version.Subscription) error {
	return fs.Unsubscribe(s.Fan)
}

// benchInformer is a real client-go informer listing n ConfigMaps and then watching nothing.
type benchInformer struct{ inf cache.SharedIndexInformer }

func (bi benchInformer) Informer() cache.SharedIndexInformer { return bi.inf }
func (bi benchInformer) Release()                            {}

func newBenchInformer(b *testing.B, n int) benchInformer {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMapList"}}
			list.SetResourceVersion("1")
			for i := range n {
				list.Items = append(list.Items, *benchObject(i))
			}
			return list, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return watch.NewFake(), nil
		},
	}
	inf := cache.NewSharedIndexInformer(benchListing{lw}, &unstructured.Unstructured{}, 0, cache.Indexers{})
	ctx, cancel := context.WithCancel(b.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.RunWithContext(ctx)
	}()
	b.Cleanup(func() {
		cancel()
		<-done
	})
	return benchInformer{inf}
}

func benchObject(i int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": fmt.Sprintf("cm-%d", i), "namespace": "ns", "uid": fmt.Sprint(i), "resourceVersion": fmt.Sprint(i + 1)}}}
}

// benchListing makes the reflector list rather than stream.
type benchListing struct{ *cache.ListWatch }

func (benchListing) IsWatchListSemanticsUnSupported() bool { return true }
