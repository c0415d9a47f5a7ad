package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Entry is a key's value as a read returns it.
type Entry struct {
	Key     string
	Value   json.RawMessage
	Version int64     // what SetOptions.Expect and DeleteOptions.Expect compare with
	Expires time.Time // zero: never
	// Readable: the write marked the value fit to show (SetOptions.Readable).
	Readable bool
}

// SetOptions are Set's options.
type SetOptions struct {
	// TTL, when positive, makes the key expire that long after the write; otherwise it never
	// expires (a Set without TTL clears an earlier one).
	TTL time.Duration
	// Expect, when not nil, makes the Set a compare-and-set: it applies only if the key's
	// version is *Expect (0: the key is absent), and fails with a *ConflictError otherwise.
	Expect *int64
	// Readable marks the value fit to show in traces, the debug page and `runner store show`;
	// otherwise only its size is shown there. Each write sets it anew.
	Readable bool
}

// DeleteOptions are Delete's options; Expect as in SetOptions.
type DeleteOptions struct {
	Expect *int64
}

// Scope is one script's store. Safe for concurrent use.
type Scope struct {
	st     *Store
	script string // the script's name, or the shared namespace's
	shared bool   // a shared namespace's store (shared.go), not a script's
	id     string
	shards []*shard
	byName map[string]*shard

	// applyMu makes the limit checks of the shards' flushes one after another, so that two
	// flushes of this process cannot both take the last room.
	applyMu sync.Mutex

	mu       sync.Mutex
	usage    []usage // the latest state seen of each shard
	reserved []usage // the state of each shard's update in flight, zero when there is none
	loaded   bool    // usage was read from every shard
}

func newScope(st *Store, script string, shared bool) *Scope {
	sc := &Scope{st: st, script: script, shared: shared, id: ownerID(script, shared), byName: map[string]*shard{}}
	sc.usage = make([]usage, st.opts.Shards)
	sc.reserved = make([]usage, st.opts.Shards)
	prefix := ""
	if shared {
		prefix = "shared-"
	}
	for i := range st.opts.Shards {
		sh := &shard{sc: sc, idx: i, name: shardName(prefix, script, sc.id, i)}
		sc.shards = append(sc.shards, sh)
		sc.byName[sh.name] = sh
	}
	return sc
}

func (sc *Scope) shardFor(key string) *shard { return sc.shards[shardOf(key, len(sc.shards))] }

// Get returns key's entry; false when the key is absent or expired.
func (sc *Scope) Get(ctx context.Context, key string) (Entry, bool, error) {
	doc, err := sc.shardFor(key).read(ctx)
	if err != nil {
		return Entry{}, false, fmt.Errorf("get store key %q: %w", key, err)
	}
	e, ok := doc.Entries[key]
	if !ok || e.expired(sc.st.opts.Now()) {
		return Entry{}, false, nil
	}
	return toEntry(key, e), true, nil
}

func toEntry(key string, e entry) Entry {
	out := Entry{Key: key, Value: e.Value, Version: e.Version, Readable: e.Readable}
	if e.Expires != 0 {
		out.Expires = time.UnixMilli(e.Expires)
	}
	return out
}

// List returns the live entries whose keys start with prefix, sorted by key.
func (sc *Scope) List(ctx context.Context, prefix string) ([]Entry, error) {
	docs, err := sc.readAll(ctx)
	if err != nil {
		return nil, fmt.Errorf("list store keys %q: %w", prefix, err)
	}
	now := sc.st.opts.Now()
	var out []Entry
	for _, doc := range docs {
		for k, e := range doc.Entries {
			if strings.HasPrefix(k, prefix) && !e.expired(now) {
				out = append(out, toEntry(k, e))
			}
		}
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// readAll lists the script's ConfigMaps (one call) and decodes those that are its shards.
func (sc *Scope) readAll(ctx context.Context) ([]*document, error) {
	list, err := sc.st.client.ConfigMaps(sc.st.opts.Namespace).List(ctx,
		metav1.ListOptions{LabelSelector: LabelScript + "=" + sc.id})
	if err != nil {
		return nil, err
	}
	var docs []*document
	for i := range list.Items {
		sh := sc.byName[list.Items[i].Name]
		if sh == nil {
			continue // another shard count's, or another script's with a colliding ID
		}
		doc, err := sh.remember(&list.Items[i])
		if err != nil {
			return nil, err
		}
		docs = append(docs, doc)
	}
	return docs, nil
}

// Set stores value (JSON) under key and returns the key's new version.
func (sc *Scope) Set(ctx context.Context, key string, value json.RawMessage, opts SetOptions) (int64, error) {
	if err := sc.checkSet(key, value); err != nil {
		return 0, err
	}
	o := &op{key: key, value: value, expect: opts.Expect, readable: opts.Readable}
	if opts.TTL > 0 {
		o.ttl = opts.TTL
	}
	res, err := sc.shardFor(key).submit(ctx, o)
	if err != nil {
		return 0, fmt.Errorf("set store key %q: %w", key, err)
	}
	return res.version, nil
}

// Delete removes key and reports whether it existed.
func (sc *Scope) Delete(ctx context.Context, key string, opts DeleteOptions) (bool, error) {
	if err := sc.checkKey(key); err != nil {
		return false, err
	}
	res, err := sc.shardFor(key).submit(ctx, &op{key: key, del: true, expect: opts.Expect})
	if err != nil {
		return false, fmt.Errorf("delete store key %q: %w", key, err)
	}
	return res.existed, nil
}

// checkKey refuses an empty or oversized key, before anything is queued.
func (sc *Scope) checkKey(key string) error {
	if key == "" {
		return fmt.Errorf("store key: a key must not be empty")
	}
	if n, limit := len(key), sc.st.opts.Limits.MaxKeyBytes; n > limit {
		return &LimitError{Key: key[:limit] + "…", Limit: "max-key-bytes", Value: n, Max: limit}
	}
	return nil
}

// checkSet refuses what checkKey does, values that are not JSON and oversized values.
func (sc *Scope) checkSet(key string, value json.RawMessage) error {
	if err := sc.checkKey(key); err != nil {
		return err
	}
	if n, limit := len(value), sc.st.opts.Limits.MaxValueBytes; n > limit {
		return &LimitError{Key: key, Limit: "max-value-bytes", Value: n, Max: limit}
	}
	if !json.Valid(value) {
		return fmt.Errorf("set store key %q: the value is not JSON", key)
	}
	return nil
}

// setUsage records what shard i holds as last seen.
func (sc *Scope) setUsage(i int, u usage) {
	sc.mu.Lock()
	sc.usage[i] = u
	sc.mu.Unlock()
}

// others sums the last seen usage of every shard but i.
func (sc *Scope) others(i int) usage {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	var u usage
	for j, s := range sc.usage {
		if j != i {
			u.keys += max(s.keys, sc.reserved[j].keys)
			u.bytes += max(s.bytes, sc.reserved[j].bytes)
		}
	}
	return u
}

// reserve records what shard i holds once its update in flight is written (zero: no update
// in flight), so that the other shards' limit checks count it before it is acknowledged.
func (sc *Scope) reserve(i int, u usage) {
	sc.mu.Lock()
	sc.reserved[i] = u
	sc.mu.Unlock()
}

// ensureLoaded reads every shard once, so the per-script limits count the keys written
// before this process started.
func (sc *Scope) ensureLoaded(ctx context.Context) error {
	sc.mu.Lock()
	loaded := sc.loaded
	sc.mu.Unlock()
	if loaded {
		return nil
	}
	if _, err := sc.readAll(ctx); err != nil {
		return err
	}
	sc.mu.Lock()
	sc.loaded = true
	sc.mu.Unlock()
	return nil
}
