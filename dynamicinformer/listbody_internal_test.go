package dynamicinformer

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/internal/deployments"
	"github.com/jsinformer/jsinformer/shardrange"
)

var deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// countingServer answers every request with respond and counts the requests.
func countingServer(t *testing.T, respond func(n int64, w http.ResponseWriter, r *http.Request)) (*rest.Config, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		respond(n.Add(1), w, r)
	}))
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL}, &n
}

func newListClient(t *testing.T, cfg *rest.Config) *client {
	t.Helper()
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c.(*client)
}

// TestListMatchesTheDynamicClient lists bodies through the informers' list and client-go's
// dynamic client: the same lists (managedFields dropped) or the same errors, in one request
// for what the fast decoder reads, in a second one through client-go for what it does not.
func TestListMatchesTheDynamicClient(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		body     string
		requests int64
	}{
		{"deployments", string(deployments.ListJSON(3)), 1},
		{"item without kind", `{"kind":"DeploymentList","apiVersion":"apps/v1","metadata":{"resourceVersion":"3"},` +
			`"items":[{"metadata":{"name":"a","managedFields":[]}}]}`, 1},
		{"a Kind key", `{"kind":"DeploymentList","Kind":"Other","apiVersion":"apps/v1","metadata":{},"items":[]}`, 2},
		{"invalid JSON", `{"kind":"DeploymentList","apiVersion":"apps/v1","items":[{]}`, 2},
		{"an object", `{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"x"}}`, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, requests := countingServer(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tc.body))
			})
			want, wantErr := dynamic.NewForConfigOrDie(cfg).Resource(deploymentsGVR).Namespace("ns").List(t.Context(), metav1.ListOptions{})
			requests.Store(0)
			got, err := newListClient(t, cfg).list(t.Context(), deploymentsGVR, "ns", metav1.ListOptions{}, nil)
			if (err != nil) != (wantErr != nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Fatalf("error %v, client-go %v", err, wantErr)
			}
			if n := requests.Load(); n != tc.requests {
				t.Fatalf("%d requests, want %d", n, tc.requests)
			}
			if err != nil {
				return
			}
			stripItems(t, want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("list\n got %v\nwant %v", got, want)
			}
		})
	}
}

func stripItems(t *testing.T, list *unstructured.UnstructuredList) {
	t.Helper()
	for i := range list.Items {
		if _, err := StripManagedFields(&list.Items[i]); err != nil {
			t.Fatal(err)
		}
	}
}

// TestListAsksAgainAfterABrokenBody: a connection broken in the middle of the body is
// followed by a second request, whose list is returned.
func TestListAsksAgainAfterABrokenBody(t *testing.T) {
	t.Parallel()
	body := deployments.ListJSON(20)
	cfg, requests := countingServer(t, func(n int64, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			_, _ = w.Write(body[:len(body)/2])
			panic(http.ErrAbortHandler) // the connection is cut, mid-body
		}
		_, _ = w.Write(body)
	})
	got, err := newListClient(t, cfg).list(t.Context(), deploymentsGVR, "ns", metav1.ListOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != 20 || requests.Load() != 2 {
		t.Fatalf("%d items in %d requests, want 20 in 2", len(got.Items), requests.Load())
	}
}

// TestListFailsAsClientGo: an error status is client-go's error, without a second request;
// a cancelled list is not asked for again.
func TestListFailsAsClientGo(t *testing.T) {
	t.Parallel()
	cfg, requests := countingServer(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"no","reason":"Forbidden","code":403}`))
	})
	_, err := newListClient(t, cfg).list(t.Context(), deploymentsGVR, "ns", metav1.ListOptions{}, nil)
	if !apierrors.IsForbidden(err) || requests.Load() != 1 {
		t.Fatalf("error %v after %d requests, want Forbidden after 1", err, requests.Load())
	}

	ctx, cancel := context.WithCancel(t.Context())
	cfg, requests = countingServer(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"DeploymentList","apiVersion":"apps/v1","items":[`))
		w.(http.Flusher).Flush()
		cancel()
		<-ctx.Done()
	})
	if _, err := newListClient(t, cfg).list(ctx, deploymentsGVR, "ns", metav1.ListOptions{}, nil); !errors.Is(err, context.Canceled) || requests.Load() != 1 {
		t.Fatalf("error %v after %d requests, want %v after 1", err, requests.Load(), context.Canceled)
	}
}

// TestPartitionedListOnBothPaths: a partitioned list keeps the same items, counted once,
// whether the fast decoder reads it or a broken body sends it to client-go's List.
func TestPartitionedListOnBothPaths(t *testing.T) {
	t.Parallel()
	body := deployments.ListJSON(40)
	p := shardrange.Partition{Field: shardrange.UID, Mask: shardrange.Mask{^uint64(0), ^uint64(0)}}
	for _, broken := range []bool{false, true} {
		cfg, _ := countingServer(t, func(n int64, w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if broken && n == 1 {
				_, _ = w.Write(body[:len(body)*3/4])
				panic(http.ErrAbortHandler) // the connection is cut, mid-body
			}
			_, _ = w.Write(body)
		})
		shard := newPartition(p, slog.New(slog.DiscardHandler), nil)
		got, err := newListClient(t, cfg).list(t.Context(), deploymentsGVR, "ns", metav1.ListOptions{}, shard)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range got.Items {
			if !p.KeepsObject(&item) {
				t.Errorf("broken=%v: item %s outside the partition kept", broken, item.GetUID())
			}
		}
		st := shard.status()
		if len(got.Items) == 0 || len(got.Items) == 40 || st.Received != 40 || st.Kept != uint64(len(got.Items)) {
			t.Errorf("broken=%v: %d items kept; received %d, kept %d; want some of 40, all 40 received once", broken, len(got.Items), st.Received, st.Kept)
		}
	}
}
