package dynamicinformer_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/dynamicinformer"
)

// flakyAPIServer serves things in namespace ns: a list of o-1 at resourceVersion 10; a first
// watch that sends o-1 (as a streaming list, when asked for one) and then a frame whose
// object cannot be decoded; and later watches that deliver o-2 and o-3 properly, resuming
// from resourceVersion 10 or as a new streaming list, then stay open.
type flakyAPIServer struct {
	watches atomic.Int64
}

func thing(name, rv, spec string) string {
	return fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":%q,"namespace":"ns","resourceVersion":%q},"spec":%s}`,
		name, rv, spec)
}

func event(typ, obj string) string { return `{"type":"` + typ + `","object":` + obj + "}\n" }

func bookmark(rv string) string {
	return event("BOOKMARK", `{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"resourceVersion":"`+rv+
		`","annotations":{"k8s.io/initial-events-end":"true"}}}`)
}

func (s *flakyAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	q := r.URL.Query()
	if q.Get("watch") != "true" {
		_, _ = fmt.Fprintf(w, `{"kind":"ThingList","apiVersion":"example.com/v1","metadata":{"resourceVersion":"10"},"items":[%s]}`,
			thing("o-1", "10", `{"n":1}`))
		return
	}
	initial := q.Get("sendInitialEvents") == "true"
	if s.watches.Add(1) == 1 {
		if initial {
			_, _ = w.Write([]byte(event("ADDED", thing("o-1", "10", `{"n":1}`)) + bookmark("10")))
		}
		_, _ = w.Write([]byte(event("ADDED", thing("o-2", "11", `{"n":1e400}`))))
		return // the client's decode error ends the watch
	}
	if initial {
		_, _ = w.Write([]byte(event("ADDED", thing("o-1", "10", `{"n":1}`))))
	}
	_, _ = w.Write([]byte(event("ADDED", thing("o-2", "11", `{"n":2}`)) + event("ADDED", thing("o-3", "12", `{"n":3}`))))
	if initial {
		_, _ = w.Write([]byte(bookmark("12")))
	}
	w.(http.Flusher).Flush()
	<-r.Context().Done()
}

// TestWatchDecodeErrorLosesNoEvent runs a Factory informer on NewClient against a server
// whose watch sends a frame that cannot be decoded: the decode error ends that watch, the
// reflector watches again from the last resourceVersion, and the cache ends with every
// object in its good state.
func TestWatchDecodeErrorLosesNoEvent(t *testing.T) {
	t.Parallel()
	srv := &flakyAPIServer{}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	client, err := dynamicinformer.NewClient(&rest.Config{Host: hs.URL})
	if err != nil {
		t.Fatal(err)
	}
	f := dynamicinformer.NewFactory(client, dynamicinformer.Options{})
	t.Cleanup(f.Shutdown)
	h, err := f.Acquire(dynamicinformer.Key{GVR: things, Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	store := h.Informer().GetStore()
	deadline := time.Now().Add(30 * time.Second)
	for len(store.List()) != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("cache holds %d objects after 30s, want 3; %d watch requests", len(store.List()), srv.watches.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	for name, want := range map[string]int64{"o-1": 1, "o-2": 2, "o-3": 3} {
		obj, ok, err := store.GetByKey("ns/" + name)
		if err != nil || !ok {
			t.Fatalf("%s missing: %v", name, err)
		}
		if n, _, _ := unstructured.NestedInt64(obj.(*unstructured.Unstructured).Object, "spec", "n"); n != want {
			t.Fatalf("%s has spec.n %d, want %d", name, n, want)
		}
	}
	if n := srv.watches.Load(); n < 2 {
		t.Fatalf("%d watch requests: the undecodable frame did not end the first watch", n)
	}
}
