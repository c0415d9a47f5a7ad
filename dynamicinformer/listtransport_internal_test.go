package dynamicinformer

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/internal/deployments"
)

// protoServer is an HTTPS server speaking HTTP/2 and HTTP/1.1 that records the protocol of
// each request by path, and answers with respond.
func protoServer(t *testing.T, respond http.HandlerFunc) (*rest.Config, func() map[string][]string) {
	t.Helper()
	var mu sync.Mutex
	protos := map[string][]string{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		protos[r.URL.Path] = append(protos[r.URL.Path], r.Proto)
		mu.Unlock()
		respond(w, r)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	return cfg, func() map[string][]string {
		mu.Lock()
		defer mu.Unlock()
		out := map[string][]string{}
		for k, v := range protos {
			out[k] = append([]string(nil), v...)
		}
		return out
	}
}

func healthChecked(t *testing.T, cfg *rest.Config, h ConnectionHealth) *client {
	t.Helper()
	checked, closeIdle, err := WithConnectionHealth(cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeIdle)
	return newListClient(t, checked)
}

// A list goes over HTTP/1.1 and everything else over the shared HTTP/2 connection.
func TestListsGoOverHTTP1(t *testing.T) {
	t.Parallel()
	cfg, protos := protoServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") != "true" {
			_, _ = w.Write(deployments.ListJSON(3))
		}
	})
	c := healthChecked(t, cfg, ConnectionHealth{ReadIdleTimeout: time.Second, PingTimeout: time.Second})
	list, err := c.list(t.Context(), deploymentsGVR, "ns", metav1.ListOptions{})
	if err != nil || len(list.Items) != 3 {
		t.Fatalf("list = %v, %v; want 3 items", list, err)
	}
	w, err := c.Resource(deploymentsGVR).Namespace("ns").Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	got, want := protos()["/apis/apps/v1/namespaces/ns/deployments"], []string{"HTTP/1.1", "HTTP/2.0"}
	if !equalStrings(got, want) {
		t.Errorf("the list and the watch over %v, want %v", got, want)
	}
}

// A list whose response stops arriving is cut after the health check's two timeouts, as a
// silent HTTP/2 connection would be, and not left waiting for the kernel.
func TestAStalledListIsCut(t *testing.T) {
	t.Parallel()
	cfg, _ := protoServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"DeploymentList","apiVersion":"apps/v1","metadata":{},"items":[`))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // hung mid-list: the connection stays open
	})
	h := ConnectionHealth{ReadIdleTimeout: 100 * time.Millisecond, PingTimeout: 100 * time.Millisecond}
	c := healthChecked(t, cfg, h)
	start := time.Now()
	_, err := c.list(t.Context(), deploymentsGVR, "ns", metav1.ListOptions{})
	if !errors.Is(err, errListStalled) {
		t.Fatalf("list error = %v, want errListStalled", err)
	}
	// The fast path and client-go's second try each wait 200 ms.
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the stalled list failed after %s", took)
	}
}

func equalStrings(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }
