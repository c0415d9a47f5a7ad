package store_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/store"
)

// A store of 50,000 keys survives a restart: a new Store (a restarted runner) lists every key
// with its value and version as written, and a get of any key answers it.
func TestFiftyThousandKeysSurviveRestart(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	const n, workers = 50000, 6000 // the race detector allows 8128 goroutines at once
	opts := store.Options{Namespace: ns, Limits: store.Limits{MaxKeys: n}}
	first, writes := newStore(t, opts)
	value := func(i int) string { return fmt.Sprintf(`{"i":%d,"s":"v-%d"}`, i, i*7) }
	versions := make([]int64, n)
	started := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				v, err := first.Scope("big.js").Set(t.Context(), fmt.Sprintf("key-%05d", i), json.RawMessage(value(i)), store.SetOptions{})
				if err != nil {
					t.Errorf("set %d: %v", i, err)
					return
				}
				versions[i] = v
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	t.Logf("%d keys written in %v with %d ConfigMap writes", n, time.Since(started).Round(time.Millisecond), writes.writes.Load())
	first.Close()

	second, _ := newStore(t, opts)
	list, err := second.Scope("big.js").List(t.Context(), "")
	if err != nil || len(list) != n {
		t.Fatalf("list after restart = %d keys, %v; want %d", len(list), err, n)
	}
	for i, e := range list {
		if e.Key != fmt.Sprintf("key-%05d", i) || string(e.Value) != value(i) || e.Version != versions[i] {
			t.Fatalf("entry %d after restart = %s %s v%d; want key-%05d %s v%d", i, e.Key, e.Value, e.Version, i, value(i), versions[i])
		}
	}
	if e, ok, err := second.Scope("big.js").Get(t.Context(), "key-31337"); err != nil || !ok || string(e.Value) != value(31337) {
		t.Fatalf("get after restart = %s %v %v", e.Value, ok, err)
	}
}
