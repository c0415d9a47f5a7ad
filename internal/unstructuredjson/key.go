package unstructuredjson

import "unicode/utf8"

// maxKeys and maxKeyLen bound a decoder's key table: Kubernetes objects use a few hundred
// distinct keys, and a key seen once (a label or annotation name, a ConfigMap key) should
// not pin memory.
const (
	maxKeys   = 4096
	maxKeyLen = 64
)

// keyTable interns object keys: the 20,000 items of a list, or the objects of a watch,
// repeat the same few hundred keys, and one string per key instead of one per occurrence
// saves an allocation per member and the memory of the copies. Owned by one decoder.
type keyTable map[string]tableKey

// tableKey is an interned key and its hash (share.go).
type tableKey struct {
	key  string
	hash uint64
}

func newKeyTable() keyTable { return make(keyTable, 256) }

// key decodes the object key at the position, and returns it with its hash.
func (d *decoder) key() (string, uint64, error) {
	content, kind, err := d.scanString()
	if err != nil {
		return "", 0, err
	}
	if kind == escaped || (kind == utf8Bytes && !utf8.Valid(content)) {
		d.buf = unquote(d.buf[:0], content)
		return string(d.buf), hashBytes(d.buf), nil
	}
	if len(content) > maxKeyLen {
		return string(content), hashBytes(content), nil
	}
	if k, ok := d.keys[string(content)]; ok { // no allocation for the lookup
		return k.key, k.hash, nil
	}
	k := tableKey{string(content), hashBytes(content)}
	if len(d.keys) < maxKeys {
		d.keys[k.key] = k
	}
	return k.key, k.hash, nil
}
