package dynamicinformer_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// listEncodings records how the list responses of configmaps came: "gzip" for a body the
// transport decompressed, "identity" for one sent as it is.
type listEncodings struct {
	mu  sync.Mutex
	got []string
}

func (l *listEncodings) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil && req.URL.Query().Get("watch") != "true" && strings.HasSuffix(req.URL.Path, "/configmaps") {
			enc := "identity"
			if resp.Uncompressed || resp.Header.Get("Content-Encoding") == "gzip" {
				enc = "gzip"
			}
			l.mu.Lock()
			l.got = append(l.got, enc)
			l.mu.Unlock()
		}
		return resp, err
	})
}

func (l *listEncodings) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got...)
}

// TestCompressionOfTheInitialList lists a namespace whose list is larger than the size from
// which kube-apiserver compresses (128 KB) through the runner's transport (WithCompression,
// then WithConnectionHealth, then NewClient), and checks how the real apiserver sent it: gzip
// when asked for (on), as it is when not (off, and auto on this machine's loopback address),
// with the informer holding every object either way.
func TestCompressionOfTheInitialList(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	client := kubernetes.NewForConfigOrDie(cp.Config)
	ns := uniqueName("compression")
	createNamespace(t, client, ns)
	const objects = 160 // 1 KB of data each: a list of about 200 KB
	for i := range objects {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: uniqueName("cm")},
			Data: map[string]string{"payload": strings.Repeat(string(rune('a'+i%26)), 1024)}}
		if _, err := client.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create configmap: %v", err)
		}
	}
	for _, tc := range []struct {
		c    dynamicinformer.Compression
		want string
	}{
		{dynamicinformer.CompressionOn, "gzip"},
		{dynamicinformer.CompressionOff, "identity"},
		{dynamicinformer.CompressionAuto, "identity"}, // the control plane listens on 127.0.0.1
	} {
		t.Run(string(tc.c), func(t *testing.T) {
			t.Parallel()
			cfg, compressed := dynamicinformer.WithCompression(cp.Config, tc.c)
			if compressed != (tc.want == "gzip") {
				t.Fatalf("WithCompression(%s) says compressed = %v", tc.c, compressed)
			}
			cfg, closeIdle, err := dynamicinformer.WithConnectionHealth(cfg, dynamicinformer.ConnectionHealth{
				ReadIdleTimeout: dynamicinformer.DefaultReadIdleTimeout, PingTimeout: dynamicinformer.DefaultPingTimeout})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(closeIdle)
			cfg = rest.CopyConfig(cfg)
			encodings := &listEncodings{}
			cfg.Wrap(encodings.wrap)
			dyn, err := dynamicinformer.NewClient(cfg)
			if err != nil {
				t.Fatal(err)
			}
			f := dynamicinformer.NewFactory(dyn, dynamicinformer.Options{})
			t.Cleanup(f.Shutdown)
			h, err := f.Acquire(dynamicinformer.Key{GVR: configmaps, Namespace: ns})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Release()
			waitSynced(t, h.Informer())
			if n := len(h.Informer().GetStore().List()); n != objects {
				t.Fatalf("informer holds %d configmaps, want %d", n, objects)
			}
			if got := encodings.list(); len(got) != 1 || got[0] != tc.want {
				t.Fatalf("list responses came as %v, want one, %s", got, tc.want)
			}
		})
	}
}
