package dynamicinformer_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/internal/deployments"
)

var things = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "things"}

// oddThing is a custom object with JSON the fast decoder must get exactly right.
const oddThing = `{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"odd","namespace":"ns",` +
	`"managedFields":[{"manager":"m","fieldsV1":{"f:spec":{}}}]},"spec":{"big":12345678901234567890,` +
	`"neg":-9223372036854775808,"exp":1e3,"frac":1.0,"negzero":-0.0,"s":"\ud83d\ude00 \u00e9 \ud800",` +
	`"dup":1,"dup":2,"deep":[[[[{"a":[]}]]]],"empty":{}}}`

// watchStream is what the fake apiserver sends on a watch: every kind of event, odd
// objects, shapes the fast path leaves to client-go, an error event, then a frame whose
// object cannot be decoded (a number out of range) and one after it.
var watchStream = strings.Join([]string{
	string(deployments.WatchFrame("ADDED", 1)),
	`{"type":"ADDED","object":` + oddThing + `}`,
	string(deployments.WatchFrame("MODIFIED", 2)),
	`{"type":"DELETED","object":{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"gone"}}}`,
	`{"type":"ADDED","object":{"apiVersion":"example.com/v1","kind":"Thing","Kind":"Other","metadata":{"name":"case"}}}`,
	`{"type":"ADDED","object":{"apiVersion":"example.com/v1","kind":"Status","metadata":{"name":"typed-by-client-go"}}}`,
	`{"object":{"kind":"Thing","apiVersion":"example.com/v1","metadata":{"resourceVersion":"9","annotations":{"k8s.io/initial-events-end":"true"}}},"type":"BOOKMARK"}`,
	`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version","reason":"Expired","code":410}}`,
	`{"type":"ADDED","object":{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"bad"},"spec":{"n":1e400}}}`,
	`{"type":"ADDED","object":{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"after"}}}`,
}, "\n")

// listBody is what the fake apiserver sends on a list.
var listBody = `{"kind":"ThingList","apiVersion":"example.com/v1","metadata":{"resourceVersion":"5"},"items":[` +
	oddThing + `,{"metadata":{"name":"untyped","managedFields":[]}},` + string(deployments.JSON(3)) + `]}`

// fakeAPIServer answers lists and watches of things with listBody and watchStream.
func fakeAPIServer(t *testing.T) *rest.Config {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			_, _ = w.Write([]byte(watchStream))
			return
		}
		_, _ = w.Write([]byte(listBody))
	}))
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL}
}

// clients are client-go's dynamic client and NewClient's, on the same server.
func clients(t *testing.T, cfg *rest.Config) (reference, fast dynamic.Interface) {
	t.Helper()
	reference, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("create reference client: %v", err)
	}
	if fast, err = dynamicinformer.NewClient(cfg); err != nil {
		t.Fatalf("create client: %v", err)
	}
	return reference, fast
}

// withoutManagedFields is what the Factory's transform makes of an object.
func withoutManagedFields(t *testing.T, obj runtime.Object) runtime.Object {
	t.Helper()
	stripped, err := dynamicinformer.StripManagedFields(obj.DeepCopyObject())
	if err != nil {
		t.Fatalf("strip managed fields: %v", err)
	}
	return stripped.(runtime.Object)
}

// TestClientListMatchesClientGo lists through both clients: the same list, managedFields
// dropped.
func TestClientListMatchesClientGo(t *testing.T) {
	t.Parallel()
	reference, fast := clients(t, fakeAPIServer(t))
	want, err := reference.Resource(things).Namespace("ns").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("reference list: %v", err)
	}
	got, err := fast.Resource(things).Namespace("ns").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(got.Items) != 3 || !reflect.DeepEqual(got.Object, want.Object) {
		t.Fatalf("list %v with %d items, want %v", got.Object, len(got.Items), want.Object)
	}
	for i := range want.Items {
		if len(got.Items[i].GetManagedFields()) != 0 {
			t.Fatalf("item %d kept its managedFields", i)
		}
		if w := withoutManagedFields(t, &want.Items[i]); !reflect.DeepEqual(&got.Items[i], w) {
			t.Fatalf("item %d:\n got %v\nwant %v", i, got.Items[i].Object, w)
		}
	}
}

// TestClientWatchMatchesClientGo watches through both clients: the same events in the same
// order, typed the same, managedFields dropped, and the undecodable frame reported as an
// error event by both, which ends the watch (the reflector then restarts it).
func TestClientWatchMatchesClientGo(t *testing.T) {
	t.Parallel()
	reference, fast := clients(t, fakeAPIServer(t))
	want := watchAll(t, reference)
	got := watchAll(t, fast)
	if len(want) != 9 || want[8].Type != watch.Error {
		t.Fatalf("reference watch gave %d events, the last %v: the stream no longer tests what it should", len(want), want[len(want)-1].Type)
	}
	if len(got) != len(want) {
		t.Fatalf("%d events, client-go %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Type != want[i].Type || reflect.TypeOf(got[i].Object) != reflect.TypeOf(want[i].Object) {
			t.Fatalf("event %d: %s %T, client-go %s %T", i, got[i].Type, got[i].Object, want[i].Type, want[i].Object)
		}
		if _, ok := want[i].Object.(*unstructured.Unstructured); !ok {
			continue // typed objects come from client-go's own decoder; errors carry their own text
		}
		if w := withoutManagedFields(t, want[i].Object); !reflect.DeepEqual(got[i].Object, w) {
			t.Fatalf("event %d:\n got %v\nwant %v", i, got[i].Object, w)
		}
	}
}

// watchAll collects a watch's events until the server ends it.
func watchAll(t *testing.T, client dynamic.Interface) []watch.Event {
	t.Helper()
	w, err := client.Resource(things).Namespace("ns").Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	var events []watch.Event
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return events
			}
			events = append(events, ev)
		case <-timeout:
			t.Fatalf("watch did not end; %d events so far", len(events))
		}
	}
}

// The informer client lists and watches, and refuses every other request: its decoder shares
// subtrees between the objects of a response, which only an informer's immutable cache may
// hold.
func TestClientOnlyListsAndWatches(t *testing.T) {
	t.Parallel()
	_, fast := clients(t, fakeAPIServer(t))
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Thing", "metadata": map[string]any{"name": "a"}}}
	ctx := t.Context()
	for _, ri := range []dynamic.ResourceInterface{fast.Resource(things), fast.Resource(things).Namespace("ns")} {
		calls := map[string]func() error{
			"get":    func() error { _, err := ri.Get(ctx, "a", metav1.GetOptions{}); return err },
			"create": func() error { _, err := ri.Create(ctx, obj, metav1.CreateOptions{}); return err },
			"update": func() error { _, err := ri.Update(ctx, obj, metav1.UpdateOptions{}); return err },
			"status": func() error { _, err := ri.UpdateStatus(ctx, obj, metav1.UpdateOptions{}); return err },
			"patch": func() error {
				_, err := ri.Patch(ctx, "a", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{})
				return err
			},
			"apply":  func() error { _, err := ri.Apply(ctx, "a", obj, metav1.ApplyOptions{FieldManager: "t"}); return err },
			"delete": func() error { return ri.Delete(ctx, "a", metav1.DeleteOptions{}) },
			"deletecollection": func() error {
				return ri.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
			},
		}
		for name, call := range calls {
			if err := call(); !errors.Is(err, dynamicinformer.ErrListWatchOnly) {
				t.Errorf("%s: %v, want ErrListWatchOnly", name, err)
			}
		}
	}
	if _, err := fast.Resource(things).Namespace("ns").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("list: %v", err)
	}
}
