package store

import "time"

// apply applies batch to doc in order, setting each op's result, and reports whether doc
// changed. It starts by dropping the expired entries, so they leave the ConfigMap with the
// shard's next write. What doc then holds is reserved for the shard until the flush
// clears it, after the update (flush.go).
func (sc *Scope) apply(idx int, doc *document, batch []*op) (changed bool) {
	sc.applyMu.Lock()
	defer sc.applyMu.Unlock()
	now := sc.st.opts.Now()
	for k, e := range doc.Entries {
		if e.expired(now) {
			delete(doc.Entries, k)
			changed = true
		}
	}
	a := applier{sc: sc, doc: doc, now: now, others: sc.others(idx), mine: doc.usage(now), bytes: doc.shardBytes()}
	for _, o := range batch {
		o.res = a.one(o)
		changed = changed || a.changed
		a.changed = false
	}
	sc.reserve(idx, a.mine)
	if changed {
		doc.At = now.UnixMilli()
	}
	return changed
}

// applier applies ops to one document, keeping the usage counts the limits are checked on.
type applier struct {
	sc      *Scope
	doc     *document
	now     time.Time
	others  usage // the script's other shards, as last seen
	mine    usage // this shard
	bytes   int   // this shard's approximate encoded size
	changed bool  // the last op changed doc
}

func (a *applier) one(o *op) result {
	cur, exists := a.doc.Entries[o.key]
	var actual int64
	if exists {
		actual = cur.Version
	}
	if o.expect != nil && *o.expect != actual {
		return result{err: &ConflictError{Key: o.key, Expected: *o.expect, Actual: actual}}
	}
	if o.del {
		return a.remove(o.key, cur, exists)
	}
	return a.set(o, cur, exists)
}

func (a *applier) remove(key string, cur entry, exists bool) result {
	if !exists {
		return result{}
	}
	delete(a.doc.Entries, key)
	a.doc.Seq++
	a.mine.keys--
	a.mine.bytes -= len(key) + len(cur.Value)
	a.bytes -= len(key) + len(cur.Value) + entryOverhead
	a.changed = true
	return result{existed: true}
}

func (a *applier) set(o *op, cur entry, exists bool) result {
	keys, bytes, shardBytes := a.mine.keys+1, a.mine.bytes+len(o.key)+len(o.value), a.bytes+len(o.key)+len(o.value)+entryOverhead
	if exists {
		keys--
		bytes -= len(o.key) + len(cur.Value)
		shardBytes -= len(o.key) + len(cur.Value) + entryOverhead
	}
	lim := a.sc.st.opts.Limits
	switch {
	case keys+a.others.keys > lim.MaxKeys && keys > a.mine.keys:
		return result{err: &LimitError{Key: o.key, Limit: "max-keys", Value: keys + a.others.keys, Max: lim.MaxKeys}}
	case bytes+a.others.bytes > lim.MaxTotalBytes && bytes > a.mine.bytes:
		return result{err: &LimitError{Key: o.key, Limit: "max-total-bytes", Value: bytes + a.others.bytes, Max: lim.MaxTotalBytes}}
	case shardBytes > MaxShardBytes && shardBytes > a.bytes:
		return result{err: &LimitError{Key: o.key, Limit: "shard bytes (raise --store-shards)", Value: shardBytes, Max: MaxShardBytes}}
	}
	a.doc.Seq++
	e := entry{Value: o.value, Version: a.doc.Seq, Readable: o.readable}
	if o.ttl > 0 {
		e.Expires = a.now.Add(o.ttl).UnixMilli()
	}
	a.doc.Entries[o.key] = e
	a.mine, a.bytes, a.changed = usage{keys: keys, bytes: bytes}, shardBytes, true
	return result{version: e.Version}
}
