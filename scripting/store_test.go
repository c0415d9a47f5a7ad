package scripting

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/jsinformer/jsinformer/store"
)

// memStore is a Store in memory with the same versions and conflicts as package store's.
type memStore struct {
	mu      sync.Mutex
	seq     int64
	entries map[string]StoreEntry
	ttls    map[string]time.Duration
}

func newMemStore() *memStore {
	return &memStore{entries: map[string]StoreEntry{}, ttls: map[string]time.Duration{}}
}

func (m *memStore) Get(_ context.Context, key string) (StoreEntry, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[key]
	return e, ok, nil
}

func (m *memStore) check(key string, expect *int64) error {
	if expect != nil && *expect != m.entries[key].Version {
		return apierrors.NewConflict(schema.GroupResource{Resource: "store"}, key, errors.New("version changed"))
	}
	return nil
}

func (m *memStore) Set(_ context.Context, key string, value []byte, opts StoreSetOptions) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(key, opts.Expect); err != nil {
		return 0, err
	}
	if len(value) > 100 {
		return 0, &store.LimitError{Key: key, Limit: "max-value-bytes", Value: len(value), Max: 100}
	}
	m.seq++
	m.entries[key] = StoreEntry{Key: key, Value: value, Version: m.seq}
	m.ttls[key] = opts.TTL
	return m.seq, nil
}

func (m *memStore) Delete(_ context.Context, key string, expect *int64) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(key, expect); err != nil {
		return false, err
	}
	_, ok := m.entries[key]
	delete(m.entries, key)
	return ok, nil
}

func (m *memStore) List(_ context.Context, prefix string) ([]StoreEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []StoreEntry
	for k, e := range m.entries {
		if strings.HasPrefix(k, prefix) {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b StoreEntry) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// ctx.store round-trips JSON values with versions, lists by prefix, deletes, passes the TTL,
// and a compare-and-set that lost throws with code 409 and reason "Conflict".
func TestStoreFromHandlers(t *testing.T) {
	t.Parallel()
	st := newMemStore()
	s := newTestScript(t, "st.js", `export default {
  onAdd(obj, ctx) {
    const v1 = ctx.store.set("seen/" + obj.metadata.name, { n: 1, tags: ["a"] }, { ttl: "1h" });
    const e = ctx.store.get("seen/" + obj.metadata.name);
    e.value.n++; // the script's own copy
    const v2 = ctx.store.set(e.key, e.value, { version: e.version });
    let conflict;
    try { ctx.store.set(e.key, 0, { version: v1 }) } catch (err) { conflict = [err.code, err.reason] }
    let created;
    try { ctx.store.set(e.key, 0, { version: 0 }) } catch (err) { created = err.reason }
    let limit;
    try { ctx.store.set("big", "x".repeat(200)) } catch (err) { limit = [err.code, err.reason, err.message.includes("max-value-bytes")] }
    ctx.store.set("other", "x");
    const listed = ctx.store.list("seen/").map(x => [x.key, x.value, x.version === v2, x.expiresAt]);
    globalThis.out = { v1, v2, conflict, created, limit, listed, del: [ctx.store.delete("other"), ctx.store.delete("other")],
      gone: ctx.store.get("other") };
  },
};`, Options{Store: st})
	if err := s.OnAdd(sample(), Event{}); err != nil {
		t.Fatal(err)
	}
	want := `{"v1":1,"v2":2,"conflict":[409,"Conflict"],"created":"Conflict","limit":[413,"RequestEntityTooLarge",true],"listed":[["seen/web",{"n":2,"tags":["a"]},true,null]],"del":[true,false],"gone":null}`
	if got := outJSON(t, s); got != want {
		t.Errorf("out = %s\nwant  %s", got, want)
	}
	if st.ttls["seen/web"] != 0 || st.ttls["other"] != 0 {
		t.Errorf("ttls = %v; a set without ttl clears it", st.ttls)
	}
}

func TestStoreArguments(t *testing.T) {
	t.Parallel()
	st := newMemStore()
	s := newTestScript(t, "st.js", `export default {
  onAdd(obj, ctx) {
    const errs = [];
    for (const f of [
      () => ctx.store.set("k", undefined),
      () => ctx.store.set("k", () => 1),
      () => ctx.store.set("", 1),
      () => ctx.store.set("k", 1, { ttl: "soon" }),
      () => ctx.store.set("k", 1, { version: -1 }),
      () => ctx.store.set("k", 1, { tll: 1 }),
      () => ctx.store.get(7),
    ]) { try { f(); errs.push("no error") } catch (e) { errs.push(e.name) } }
    ctx.store.set("t", 1, { ttl: 90000 });
    globalThis.out = errs;
  },
};`, Options{Store: st})
	if err := s.OnAdd(sample(), Event{}); err != nil {
		t.Fatal(err)
	}
	if got := outJSON(t, s); got != `["TypeError","TypeError","TypeError","TypeError","TypeError","TypeError","TypeError"]` {
		t.Errorf("errors = %s", got)
	}
	if len(st.entries) != 1 || st.ttls["t"] != 90*time.Second {
		t.Errorf("entries %v, ttls %v; want only t, for 90s", st.entries, st.ttls)
	}
}

// validate and mutate read the store; their writes throw "side effects are not allowed here".
func TestStoreInAdmissionIsReadOnly(t *testing.T) {
	t.Parallel()
	st := newMemStore()
	if _, err := st.Set(t.Context(), "limit", []byte(`3`), StoreSetOptions{}); err != nil {
		t.Fatal(err)
	}
	s := newTestScript(t, "v.js", `export default {
  validate(obj, ctx) {
    const limit = ctx.store.get("limit").value;
    const listed = ctx.store.list().length;
    try { ctx.store.set("x", 1) } catch (e) { globalThis.out = [limit, listed, e.message] }
    ctx.store.delete("limit");
  },
};`, Options{Store: st})
	_, err := s.Validate(AdmissionRequest{Operation: "CREATE", Object: sample()})
	if !errors.Is(err, ErrSideEffect) || !strings.Contains(err.Error(), "ctx.store.delete in validate") {
		t.Errorf("Validate err = %v; want ErrSideEffect naming ctx.store.delete", err)
	}
	if got := outJSON(t, s); !strings.Contains(got, `[3,1,"Error: ctx.store.set in validate: side effects are not allowed here`) &&
		!strings.Contains(got, `[3,1,"ctx.store.set in validate: side effects are not allowed here`) {
		t.Errorf("out = %s", got)
	}
	if len(st.entries) != 1 {
		t.Errorf("entries = %v; want only limit", st.entries)
	}
}

func TestStoreWithoutOne(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "st.js", `export default { onAdd(obj, ctx) { ctx.store.get("k") } };`, Options{})
	if err := s.OnAdd(sample(), Event{}); err == nil || !strings.Contains(err.Error(), "the store is not available here") {
		t.Errorf("err = %v", err)
	}
}
