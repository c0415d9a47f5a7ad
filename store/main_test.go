package store_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/store"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) { controlplane.Exit(m, &cp) }

// writeCounter counts the requests that write ConfigMaps (POST, PUT).
type writeCounter struct {
	next   http.RoundTripper
	writes atomic.Int64
}

func (w *writeCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if (r.Method == http.MethodPut || r.Method == http.MethodPost) && strings.Contains(r.URL.Path, "/configmaps") {
		w.writes.Add(1)
	}
	return w.next.RoundTrip(r)
}

// client returns a client of the test control plane counting its ConfigMap writes.
func client(t *testing.T) (kubernetes.Interface, *writeCounter) {
	t.Helper()
	cfg := rest.CopyConfig(controlplane.Require(t, cp).Config)
	cfg.QPS, cfg.Burst = 1000, 1000
	wc := &writeCounter{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { wc.next = rt; return wc })
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	return c, wc
}

var nsCount atomic.Int64

// namespace creates a namespace of its own for the test.
func namespace(t *testing.T) string {
	t.Helper()
	c, _ := client(t)
	name := fmt.Sprintf("store-%d", nsCount.Add(1))
	_, err := c.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	return name
}

// newStore starts a Store (one replica) in ns, closed when the test ends.
func newStore(t *testing.T, opts store.Options) (*store.Store, *writeCounter) {
	t.Helper()
	c, wc := client(t)
	s, err := store.New(c.CoreV1(), opts, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("new store: %v", err)
	}
	t.Cleanup(s.Close)
	return s, wc
}

func ptr(v int64) *int64 { return &v }

// configMaps returns the store ConfigMaps of ns.
func configMaps(t *testing.T, ns string) []corev1.ConfigMap {
	t.Helper()
	c, _ := client(t)
	list, err := c.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{LabelSelector: store.LabelScript})
	if err != nil {
		t.Fatalf("list configmaps: %v", err)
	}
	return list.Items
}
