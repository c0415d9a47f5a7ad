package dynamicinformer_test

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// TestStreamingListsWhereTheServerRefusesThem: with --streaming-lists on an API server whose
// WatchList feature is off (it answers sendInitialEvents with 422), informers sync by listing,
// the refusal is asked once per factory rather than once per informer and list, and it is
// never reported as an informer failing.
func TestStreamingListsWhereTheServerRefusesThem(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	off, err := cp.StartExtraAPIServer(t.Context(), "--feature-gates=WatchList=false")
	if err != nil {
		t.Fatalf("start a kube-apiserver with WatchList off: %v", err)
	}
	t.Cleanup(func() { _ = off.Stop() })
	client := kubernetes.NewForConfigOrDie(cp.Config)
	ns := uniqueName("nowatchlist")
	createNamespace(t, client, ns)
	for _, name := range []string{"a", "b", "c"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}}}
		if _, err := client.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	yes := true
	_, err = kubernetes.NewForConfigOrDie(off.Config).CoreV1().ConfigMaps(ns).Watch(t.Context(), metav1.ListOptions{
		SendInitialEvents: &yes, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("a streaming list from the server with WatchList off: %v, want 422 Invalid", err)
	}

	var streamed atomic.Int64
	cfg := rest.CopyConfig(off.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.URL.Query().Get("sendInitialEvents") == "true" && strings.HasSuffix(req.URL.Path, "/configmaps") {
				streamed.Add(1)
			}
			return rt.RoundTrip(req)
		})
	})
	informerClient, err := dynamicinformer.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var health []dynamicinformer.HealthEvent
	f := dynamicinformer.NewFactory(informerClient, dynamicinformer.Options{StreamingLists: true,
		OnHealth: func(ev dynamicinformer.HealthEvent) { mu.Lock(); health = append(health, ev); mu.Unlock() }})
	t.Cleanup(f.Shutdown)
	for _, key := range []dynamicinformer.Key{
		{GVR: configmaps, Namespace: ns},
		{GVR: configmaps, Namespace: ns, LabelSelector: "app in (a,b)"},
	} {
		inf, err := f.Acquire(key)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(inf.Release)
		waitSynced(t, inf.Informer())
		want := 3
		if key.LabelSelector != "" {
			want = 2
		}
		if got := len(inf.Informer().GetStore().List()); got != want {
			t.Errorf("informer %s holds %d objects, want %d", key, got, want)
		}
	}
	if got := streamed.Load(); got != 1 {
		t.Errorf("streaming list requests = %d, want 1: the first refusal is remembered", got)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, ev := range health {
		t.Errorf("health event %v (%v): a refused streaming list is no failure", ev.Kind, ev.Err)
	}
}
