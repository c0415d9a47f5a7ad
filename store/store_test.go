package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/jsinformer/jsinformer/store"
)

// A value set is what get and list return, with its version, and is in a ConfigMap as soon
// as Set returns; a delete removes it.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	s, _ := newStore(t, store.Options{Namespace: ns})
	sc, ctx := s.Scope("notify.js"), t.Context()
	value := json.RawMessage(`{"sent":["a","b"],"at":1.5,"n":null}`)
	v1, err := sc.Set(ctx, "last/a", value, store.SetOptions{})
	if err != nil || v1 <= 0 {
		t.Fatalf("set = %d, %v; want a positive version", v1, err)
	}
	if !strings.Contains(strings.Join(dataOf(configMaps(t, ns)), ""), `"last/a"`) {
		t.Fatal("the key is not in a ConfigMap after Set returned")
	}
	got, ok, err := sc.Get(ctx, "last/a")
	if err != nil || !ok || string(got.Value) != string(value) || got.Version != v1 {
		t.Fatalf("get = %+v %v %v; want %s version %d", got, ok, err, value, v1)
	}
	if v2, err := sc.Set(ctx, "last/a", value, store.SetOptions{}); err != nil || v2 <= v1 {
		t.Fatalf("second set = %d, %v; want a version above %d", v2, err, v1)
	}
	mustSet(t, sc, "last/b", `2`)
	mustSet(t, sc, "other", `3`)
	list, err := sc.List(ctx, "last/")
	if err != nil || len(list) != 2 || list[0].Key != "last/a" || list[1].Key != "last/b" {
		t.Fatalf("list last/ = %+v, %v; want last/a, last/b", list, err)
	}
	if existed, err := sc.Delete(ctx, "last/a", store.DeleteOptions{}); err != nil || !existed {
		t.Fatalf("delete = %v, %v; want existed", existed, err)
	}
	if _, ok, err := sc.Get(ctx, "last/a"); ok || err != nil {
		t.Fatalf("get after delete = %v, %v; want absent", ok, err)
	}
	if existed, err := sc.Delete(ctx, "last/a", store.DeleteOptions{}); err != nil || existed {
		t.Fatalf("second delete = %v, %v; want not existed", existed, err)
	}
	if _, ok, _ := s.Scope("other.js").Get(ctx, "other"); ok {
		t.Fatal("another script reads this script's key")
	}
}

func dataOf(cms []corev1.ConfigMap) []string {
	var out []string
	for _, cm := range cms {
		out = append(out, cm.Data[store.DataKey])
	}
	return out
}

func mustSet(t *testing.T, sc *store.Scope, key, value string) int64 {
	t.Helper()
	v, err := sc.Set(t.Context(), key, json.RawMessage(value), store.SetOptions{})
	if err != nil {
		t.Fatalf("set %s: %v", key, err)
	}
	return v
}

// Two replicas compare-and-set one key from the version both read: exactly one wins, the
// other gets a ConflictError (409 Conflict); a version from before a delete never matches.
func TestCompareAndSetTwoReplicas(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	a, _ := newStore(t, store.Options{Namespace: ns})
	b, _ := newStore(t, store.Options{Namespace: ns})
	ctx := t.Context()
	v := mustSet(t, a.Scope("s"), "k", `0`)
	for round := range 10 {
		var wins, conflicts int
		var mu sync.Mutex
		var wg sync.WaitGroup
		expect := v
		for i, sc := range []*store.Scope{a.Scope("s"), b.Scope("s")} {
			wg.Go(func() {
				nv, err := sc.Set(ctx, "k", json.RawMessage(fmt.Sprint(round*10+i)), store.SetOptions{Expect: ptr(expect)})
				mu.Lock()
				defer mu.Unlock()
				var ce *store.ConflictError
				switch {
				case err == nil:
					wins++
					v = nv
				case errors.As(err, &ce) && errors.Is(err, store.ErrConflict) && ce.Status().Code == 409:
					conflicts++
				default:
					t.Errorf("round %d: set: %v", round, err)
				}
			})
		}
		wg.Wait()
		if wins != 1 || conflicts != 1 {
			t.Fatalf("round %d: %d wins, %d conflicts; want exactly one of each", round, wins, conflicts)
		}
	}
	if _, err := a.Scope("s").Delete(ctx, "k", store.DeleteOptions{Expect: ptr(v)}); err != nil {
		t.Fatalf("delete at the current version: %v", err)
	}
	mustSet(t, a.Scope("s"), "k", `1`)
	if _, err := b.Scope("s").Set(ctx, "k", json.RawMessage(`2`), store.SetOptions{Expect: ptr(v)}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("set with a version from before the delete: %v; want a conflict", err)
	}
	if _, err := b.Scope("s").Set(ctx, "k", json.RawMessage(`2`), store.SetOptions{Expect: ptr(0)}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("create-only set of an existing key: %v; want a conflict", err)
	}
}

// Two replicas increment one counter with get and compare-and-set, retrying conflicts: no
// increment is lost.
func TestCounterTwoReplicas(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	a, _ := newStore(t, store.Options{Namespace: ns})
	b, _ := newStore(t, store.Options{Namespace: ns})
	const each = 15
	var wg sync.WaitGroup
	for _, s := range []*store.Store{a, b, a, b} {
		wg.Go(func() {
			for range each {
				increment(t, s.Scope("c"))
			}
		})
	}
	wg.Wait()
	got, _, err := a.Scope("c").Get(t.Context(), "n")
	if err != nil || string(got.Value) != fmt.Sprint(4*each) {
		t.Fatalf("counter = %s, %v; want %d", got.Value, err, 4*each)
	}
}

func increment(t *testing.T, sc *store.Scope) {
	for range 200 {
		e, ok, err := sc.Get(t.Context(), "n")
		if err != nil {
			t.Errorf("get: %v", err)
			return
		}
		var n int
		if ok {
			_ = json.Unmarshal(e.Value, &n)
		}
		_, err = sc.Set(t.Context(), "n", json.RawMessage(fmt.Sprint(n+1)), store.SetOptions{Expect: ptr(e.Version)})
		if err == nil {
			return
		}
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("set: %v", err)
			return
		}
	}
	t.Error("increment: 200 conflicts in a row")
}
