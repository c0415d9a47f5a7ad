package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine/internal/version"
	"github.com/jsinformer/jsinformer/k8sclient"
	"github.com/jsinformer/jsinformer/plugins"
	"github.com/jsinformer/jsinformer/scripting"
)

// Fakes behind the engine's seams, for unit tests of the loader's transitions: real client-go
// informers over a scripted ListerWatcher, so registration, replay and HasSynced are the
// real thing, and a resolver that knows only ConfigMaps.

var configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

type fakeResolver struct{}

func (fakeResolver) Resolve(name string) (dynamicinformer.Resource, error) {
	if name == "v1/configmaps" || name == "configmaps" {
		return dynamicinformer.Resource{GVR: configMapsGVR, Kind: "ConfigMap", Namespaced: true}, nil
	}
	return dynamicinformer.Resource{}, fmt.Errorf("resolve %q: %w", name, dynamicinformer.ErrUnknownResource)
}

// fakeSource starts one informer per key; while blocked, new informers' lists wait, so their
// registrations never sync.
type fakeSource struct {
	objects int
	mu      sync.Mutex
	blocked chan struct{} // nil: lists answer at once
	entries map[dynamicinformer.Key]*fakeEntry
}

type fakeEntry struct {
	inf    cache.SharedIndexInformer
	refs   int
	cancel context.CancelFunc
	done   chan struct{}
}

func newFakeSource(objects int) *fakeSource {
	return &fakeSource{objects: objects, entries: map[dynamicinformer.Key]*fakeEntry{}}
}

// block makes informers started from now on list only after unblock.
func (s *fakeSource) block() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blocked = make(chan struct{})
}

func (s *fakeSource) unblock() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.blocked)
	s.blocked = nil
}

func (s *fakeSource) Acquire(key dynamicinformer.Key) (InformerHandle, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[key]
	if e == nil {
		e = s.start(key, s.blocked)
		s.entries[key] = e
	}
	e.refs++
	return &fakeHandle{source: s, key: key, inf: e.inf}, nil
}

func (s *fakeSource) start(key dynamicinformer.Key, blocked chan struct{}) *fakeEntry {
	lw := &fakeListWatch{objects: s.objects, namespace: key.Namespace, blocked: blocked}
	inf := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
	ctx, cancel := context.WithCancel(context.Background())
	e := &fakeEntry{inf: inf, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(e.done)
		inf.RunWithContext(ctx)
	}()
	return e
}

func (s *fakeSource) release(key dynamicinformer.Key) {
	s.mu.Lock()
	e := s.entries[key]
	e.refs--
	if e.refs > 0 {
		s.mu.Unlock()
		return
	}
	delete(s.entries, key)
	s.mu.Unlock()
	e.cancel()
	<-e.done
}

func (s *fakeSource) Health() []dynamicinformer.Health { return nil }

func (s *fakeSource) Active() map[dynamicinformer.Key]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[dynamicinformer.Key]int{}
	for k, e := range s.entries {
		out[k] = e.refs
	}
	return out
}

func (s *fakeSource) Shutdown() {
	s.mu.Lock()
	entries := s.entries
	s.entries = map[dynamicinformer.Key]*fakeEntry{}
	s.mu.Unlock()
	for _, e := range entries {
		e.cancel()
		<-e.done
	}
}

type fakeHandle struct {
	source *fakeSource
	key    dynamicinformer.Key
	inf    cache.SharedIndexInformer
	once   sync.Once
}

func (h *fakeHandle) Informer() cache.SharedIndexInformer { return h.inf }
func (h *fakeHandle) Release()                            { h.once.Do(func() { h.source.release(h.key) }) }

// fakeListWatch lists n ConfigMaps (after blocked is closed, if set) and watches nothing.
type fakeListWatch struct {
	objects   int
	namespace string
	blocked   chan struct{}
}

func (lw *fakeListWatch) List(opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), opts)
}

func (lw *fakeListWatch) ListWithContext(ctx context.Context, _ metav1.ListOptions) (runtime.Object, error) {
	if lw.blocked != nil {
		select {
		case <-lw.blocked:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMapList"}}
	list.SetResourceVersion("1")
	for i := range lw.objects {
		list.Items = append(list.Items, unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": fmt.Sprintf("cm-%d", i), "namespace": "ns", "uid": fmt.Sprint(i), "resourceVersion": "1"}}})
	}
	return list, nil
}

func (lw *fakeListWatch) Watch(metav1.ListOptions) (watch.Interface, error) {
	return watch.NewFake(), nil
}

func (lw *fakeListWatch) WatchWithContext(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return watch.NewFake(), nil
}

// IsWatchListSemanticsUnSupported makes the reflector list rather than stream.
func (lw *fakeListWatch) IsWatchListSemanticsUnSupported() bool { return true }

// loaderEngine is an engine on fakes whose loader the test drives: the test goroutine plays
// the loader, applying plugin events and version syncs one at a time, as Run's loop does.
func loaderEngine(t *testing.T, source *fakeSource) *Engine {
	t.Helper()
	cfg := Config{RESTConfig: &rest.Config{}, ScriptsDir: t.TempDir(), HandlerTimeout: 2 * time.Second, Logger: slog.New(slog.DiscardHandler),
		Registerer: prometheus.NewRegistry()}
	if err := cfg.setDefaults(); err != nil {
		t.Fatal(err)
	}
	e := &Engine{cfg: cfg}
	client := k8sclient.New(dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), fakeResolver{}, k8sclient.Options{Logger: cfg.Logger})
	e.init(Env{Informers: source, Resolver: fakeResolver{}, Clock: realClock{},
		Client: func(logger *slog.Logger) scripting.Client { return client.WithLogger(logger) }})
	t.Cleanup(func() {
		e.shutdown()
		if n := len(source.Active()); n != 0 {
			t.Errorf("%d informers still running after shutdown", n)
		}
	})
	return e
}

func (e *Engine) loadContent(name, content string) {
	sum := sha256.Sum256([]byte(content))
	e.onPluginEvent(plugins.Event{Kind: plugins.Loaded, Source: plugins.Source{Name: name, Content: []byte(content), Hash: hex.EncodeToString(sum[:6])}})
}

// syncUntil applies version syncs, as the loop does, until want has synced.
func (e *Engine) syncUntil(t *testing.T, want *loaded) {
	t.Helper()
	for {
		select {
		case v := <-e.synced:
			e.onSynced(v)
			if v == want {
				return
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("version %s did not sync within 10s", want.ver.Hash())
		}
	}
}

// waitState polls until v reaches want.
func waitState(t *testing.T, v *loaded, want version.State) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for v.ver.CurrentState() != want {
		if time.Now().After(deadline) {
			t.Fatalf("version %s is %s, want %s", v.ver.Hash(), v.ver.CurrentState(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// series is the value of the series of family whose labels include labels (name, value
// pairs), as a scrape of the engine's registry serves it; 0 when it has none.
func series(t *testing.T, e *Engine, family string, labels ...string) float64 {
	t.Helper()
	mfs, err := e.cfg.Registerer.(prometheus.Gatherer).Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != family {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if got[labels[i]] != labels[i+1] {
					continue metrics
				}
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			}
		}
	}
	return 0
}
