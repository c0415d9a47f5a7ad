package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jsinformer/jsinformer/store"
)

// Two Stores on one Memory behave as two replicas on one API server: every increment of a
// compare-and-set counter is kept, racing compare-and-sets have one winner, and a new Store
// reads what the others wrote.
func TestMemoryLikeTheAPIServer(t *testing.T) {
	t.Parallel()
	mem := store.Memory()
	open := func() *store.Store {
		s, err := store.New(mem, store.Options{Namespace: "ns", Shards: 2}, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	a, b := open(), open()
	var wg sync.WaitGroup
	for _, s := range []*store.Store{a, b, a, b} {
		wg.Go(func() {
			for range 20 {
				increment(t, s.Scope("m"))
			}
		})
	}
	wg.Wait()
	got, _, err := open().Scope("m").Get(t.Context(), "n")
	if err != nil || string(got.Value) != "80" {
		t.Fatalf("counter = %s, %v; want 80", got.Value, err)
	}
	var wins int
	var mu sync.Mutex
	for i, s := range []*store.Store{a, b} {
		wg.Go(func() {
			_, err := s.Scope("m").Set(t.Context(), "n", json.RawMessage(fmt.Sprint(i)), store.SetOptions{Expect: ptr(got.Version)})
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				wins++
			} else if !errors.Is(err, store.ErrConflict) {
				t.Errorf("set: %v", err)
			}
		})
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d compare-and-sets won; want 1", wins)
	}
}

// Memory refuses what the API server refuses: an update carrying a stale resourceVersion
// (Conflict), a second create of one name (AlreadyExists), a get of nothing (NotFound).
func TestMemoryOptimisticConcurrency(t *testing.T) {
	t.Parallel()
	cms, ctx := store.Memory().ConfigMaps("ns"), t.Context()
	if _, err := cms.Get(ctx, "x", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get of nothing: %v", err)
	}
	first, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Labels: map[string]string{"a": "b"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx, first, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: %v", err)
	}
	second, err := cms.Update(ctx, first, metav1.UpdateOptions{})
	if err != nil || second.ResourceVersion == first.ResourceVersion {
		t.Fatalf("update = %v, %v; want a new resourceVersion", second, err)
	}
	if _, err := cms.Update(ctx, first, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("update with a stale resourceVersion: %v; want Conflict", err)
	}
	if list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "a=b"}); err != nil || len(list.Items) != 1 {
		t.Fatalf("list = %v, %v", list, err)
	}
	if list, _ := cms.List(ctx, metav1.ListOptions{LabelSelector: "a=c"}); len(list.Items) != 0 {
		t.Fatalf("list of another label = %d items", len(list.Items))
	}
}
