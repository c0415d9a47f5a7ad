package dynamicinformer

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/internal/deployments"
)

var deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// pagedServer serves a list of Deployments in pages of two: the page after token "cN" starts
// at item N. It records the continue token of every request, and holds the requests for
// the tokens in block until they are cancelled.
type pagedServer struct {
	items int
	block map[string]bool

	mu        sync.Mutex
	requests  []string // continue tokens, "" for a first page
	cancelled []string // the tokens of held requests whose client went away
}

func (s *pagedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("continue")
	s.mu.Lock()
	s.requests = append(s.requests, token)
	s.mu.Unlock()
	if s.block[token] {
		<-r.Context().Done()
		s.mu.Lock()
		s.cancelled = append(s.cancelled, token)
		s.mu.Unlock()
		return
	}
	from := 0
	if token != "" {
		_, _ = fmt.Sscanf(token, "c%d", &from)
	}
	to := min(from+2, s.items)
	next := ""
	if to < s.items {
		next = fmt.Sprintf("c%d", to)
	}
	items := make([]string, 0, to-from)
	for i := from; i < to; i++ {
		items = append(items, string(deployments.JSON(i)))
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprintf(w, `{"kind":"DeploymentList","apiVersion":"apps/v1","metadata":{"resourceVersion":"7","continue":%q},"items":[%s]}`,
		next, strings.Join(items, ","))
}

func (s *pagedServer) seen() (requests, cancelled []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...), append([]string(nil), s.cancelled...)
}

// waitSeen polls until the server's requests and cancellations are as wanted.
func (s *pagedServer) waitSeen(t *testing.T, requests, cancelled []string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, c := s.seen()
		if reflect.DeepEqual(r, requests) && reflect.DeepEqual(c, cancelled) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("server saw requests %q and cancellations %q, want %q and %q", r, c, requests, cancelled)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func newPages(t *testing.T, srv *pagedServer) *pages {
	t.Helper()
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	c, err := NewClient(&rest.Config{Host: hs.URL})
	if err != nil {
		t.Fatal(err)
	}
	p := &pages{c: c.(*client), key: Key{GVR: deploymentsGVR, Namespace: "ns"}}
	t.Cleanup(p.stop)
	return p
}

// listNames lists one page and returns its items' names and continue token.
func listNames(t *testing.T, p *pages, token string) ([]string, string) {
	t.Helper()
	list, err := p.list(t.Context(), metav1.ListOptions{Limit: 2, Continue: token})
	if err != nil {
		t.Fatalf("list page after %q: %v", token, err)
	}
	var names []string
	for _, item := range list.Items {
		names = append(names, item.GetName())
	}
	return names, list.GetContinue()
}

// TestPagesPrefetchTheNextPage lists five objects in pages of two: each next page is
// requested before it is asked for, and each page exactly once.
func TestPagesPrefetchTheNextPage(t *testing.T) {
	t.Parallel()
	srv := &pagedServer{items: 5}
	p := newPages(t, srv)
	var names []string
	token := ""
	for page := range 3 {
		got, next := listNames(t, p, token)
		names = append(names, got...)
		if page < 2 {
			srv.waitSeen(t, []string{"", "c2", "c4"}[:page+2], nil) // the next page, already
		}
		token = next
	}
	if token != "" || len(names) != 5 {
		t.Fatalf("listed %q, last token %q", names, token)
	}
	srv.waitSeen(t, []string{"", "c2", "c4"}, nil)
}

// TestPagesCancelAPrefetchNotAskedFor starts a list, then starts over instead of asking for
// the prefetched page: the prefetch is cancelled and the new list served; stop cancels the
// prefetch of the second attempt and waits for it.
func TestPagesCancelAPrefetchNotAskedFor(t *testing.T) {
	t.Parallel()
	srv := &pagedServer{items: 5, block: map[string]bool{"c2": true}}
	p := newPages(t, srv)
	listNames(t, p, "")
	srv.waitSeen(t, []string{"", "c2"}, nil)
	names, _ := listNames(t, p, "")
	if len(names) != 2 {
		t.Fatalf("the second first page has %q", names)
	}
	srv.waitSeen(t, []string{"", "c2", "", "c2"}, []string{"c2"})
	pending := p.next
	p.stop()
	select {
	case <-pending.done:
	default:
		t.Fatal("stop returned before the prefetch's goroutine ended")
	}
	srv.waitSeen(t, []string{"", "c2", "", "c2"}, []string{"c2", "c2"})
	p.start(t.Context(), metav1.ListOptions{Limit: 2, Continue: "c4"})
	if p.next != nil {
		t.Fatal("a prefetch started after stop")
	}
}

// TestPagesMatchTheDynamicClient lists bodies through pages and client-go's dynamic client:
// the same lists (managedFields dropped), the same errors, also for a body the fast decoder
// leaves to client-go's.
func TestPagesMatchTheDynamicClient(t *testing.T) {
	t.Parallel()
	bodies := map[string]string{
		"deployments": string(deployments.ListJSON(3)),
		"item without kind": `{"kind":"DeploymentList","apiVersion":"apps/v1","metadata":{"resourceVersion":"3"},` +
			`"items":[{"metadata":{"name":"a","managedFields":[]}}]}`,
		"a Kind key":   `{"kind":"DeploymentList","Kind":"Other","apiVersion":"apps/v1","metadata":{},"items":[]}`,
		"invalid JSON": `{"kind":"DeploymentList","apiVersion":"apps/v1","items":[{]}`,
		"not a list":   `{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"x"}}`,
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(body))
			}))
			t.Cleanup(hs.Close)
			cfg := &rest.Config{Host: hs.URL}
			want, wantErr := dynamic.NewForConfigOrDie(cfg).Resource(deploymentsGVR).Namespace("ns").List(t.Context(), metav1.ListOptions{})
			c, err := NewClient(cfg)
			if err != nil {
				t.Fatal(err)
			}
			p := &pages{c: c.(*client), key: Key{GVR: deploymentsGVR, Namespace: "ns"}}
			got, err := p.list(t.Context(), metav1.ListOptions{})
			if (err != nil) != (wantErr != nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Fatalf("error %v, client-go %v", err, wantErr)
			}
			if err != nil {
				return
			}
			for i := range want.Items {
				if _, err := StripManagedFields(&want.Items[i]); err != nil {
					t.Fatal(err)
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("list\n got %v\nwant %v", got, want)
			}
		})
	}
}
