package unstructuredjson

import (
	"errors"
	"fmt"
	"sync"
)

// maxDepth is encoding/json's scanner limit: a document nesting objects and arrays deeper
// than this is an error there, so it is one here.
const maxDepth = 10000

// errDepth is the error for a document nested deeper than maxDepth.
var errDepth = errors.New("exceeded max depth")

// mode says how an object's members are treated while it is decoded; a set of flags.
type mode uint8

const (
	plain    mode = 0
	document mode = 1 << iota // the document's top level: kind and apiVersion checked
	root                      // an object handed out: its "metadata" decoded as metadata
	metadata                  // managedFields skipped (validated, not allocated)
	list                      // a list document: "items" decoded as the list's items
	own                       // a map unique to its object: never shared (share.go)
)

// decoder is the state of one decode call. It is taken from a pool and not shared.
type decoder struct {
	data  []byte
	pos   int
	depth int
	strip bool // drop managedFields of root objects
	frame bool // only find where a value ends: numbers are not converted

	gvk   typeMeta                  // the document's apiVersion and kind, read as apimachinery does
	items []map[string]any          // a list document's items
	keep  func(map[string]any) bool // Options.Keep: which items to hold

	// pairs and elems are stacks of the members and elements of the objects and arrays being
	// decoded; each level uses the part above the length it found and truncates back to it,
	// so a map or slice is allocated once, at its final size.
	pairs  []pair
	elems  []any
	keys   keyTable
	values *valueCache
	shares *shareTable
	buf    []byte // scratch for strings that need unescaping

	// The last value decoded: its content hash, and whether it may be a member of a shared
	// subtree (a scalar, or a shared map or array). A member of a map has its member hash.
	vhash   uint64
	vshared bool
}

type pair struct {
	key string
	val any
}

var decoders = sync.Pool{New: func() any {
	return &decoder{keys: newKeyTable(), values: new(valueCache), shares: new(shareTable)}
}}

// getDecoder returns a pooled decoder reset to data.
func getDecoder(data []byte, strip bool) *decoder {
	d := decoders.Get().(*decoder)
	d.data, d.pos, d.depth, d.strip, d.frame = data, 0, 0, strip, false
	d.gvk, d.items, d.keep = typeMeta{}, nil, nil
	return d
}

// put returns d to the pool without references into the caller's data or results. The
// stacks hold references only below their length (a level clears what it pops); a decode
// that failed may have left some there.
func (d *decoder) put() {
	d.data, d.items, d.keep = nil, nil, nil
	clear(d.pairs)
	clear(d.elems)
	d.pairs, d.elems = d.pairs[:0], d.elems[:0]
	decoders.Put(d)
}

// syntaxError describes invalid input at the decoder's position.
func (d *decoder) syntaxError(what string) error {
	if d.pos >= len(d.data) {
		return fmt.Errorf("decode json: unexpected end of input, expected %s", what)
	}
	return fmt.Errorf("decode json: invalid character %q at offset %d, expected %s", d.data[d.pos], d.pos, what)
}

func (d *decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// peek returns the byte at the position, or 0 at the end.
func (d *decoder) peek() byte {
	if d.pos < len(d.data) {
		return d.data[d.pos]
	}
	return 0
}

// end checks that only whitespace follows the document.
func (d *decoder) end() error {
	d.skipSpace()
	if d.pos != len(d.data) {
		return d.syntaxError("end of input")
	}
	return nil
}

// value decodes any JSON value at the position (whitespace before it skipped).
func (d *decoder) value() (any, error) {
	d.skipSpace()
	switch c := d.peek(); {
	case c == '{':
		return d.object(plain)
	case c == '[':
		return d.array()
	case c == '"':
		return d.strValue()
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	default:
		return d.literal()
	}
}

// literal decodes true, false or null.
func (d *decoder) literal() (any, error) {
	rest := d.data[d.pos:]
	d.vshared = true
	switch {
	case hasPrefix(rest, "true"):
		d.pos += 4
		d.vhash = hashTrue
		return true, nil
	case hasPrefix(rest, "false"):
		d.pos += 5
		d.vhash = hashFalse
		return false, nil
	case hasPrefix(rest, "null"):
		d.pos += 4
		d.vhash = hashNull
		return nil, nil
	}
	return nil, d.syntaxError("a value")
}

func hasPrefix(b []byte, s string) bool {
	return len(b) >= len(s) && string(b[:len(s)]) == s
}

func (d *decoder) push() error {
	if d.depth++; d.depth > maxDepth {
		return errDepth
	}
	return nil
}

// object decodes the object at the position, treating its members as m says.
func (d *decoder) object(m mode) (map[string]any, error) {
	d.pos++ // '{'
	if err := d.push(); err != nil {
		return nil, err
	}
	base := len(d.pairs)
	var h uint64
	shared := m == plain
	d.skipSpace()
	if d.peek() == '}' {
		d.pos++
		d.depth--
		return d.buildShared(base, h, shared), nil
	}
	for {
		if err := d.member(m); err != nil {
			return nil, err
		}
		h += d.vhash
		shared = shared && d.vshared
		d.skipSpace()
		switch d.peek() {
		case ',':
			d.pos++
			continue
		case '}':
			d.pos++
		default:
			return nil, d.syntaxError("',' or '}' after object member")
		}
		break
	}
	d.depth--
	return d.buildShared(base, h, shared), nil
}

// member decodes one "key": value and pushes it on the pairs stack, or skips it.
func (d *decoder) member(m mode) error {
	d.skipSpace()
	if d.peek() != '"' {
		return d.syntaxError("'\"' starting an object key")
	}
	key, keyHash, err := d.key()
	if err != nil {
		return err
	}
	d.skipSpace()
	if d.peek() != ':' {
		return d.syntaxError("':' after object key")
	}
	d.pos++
	d.skipSpace()
	var v any
	switch {
	case m&metadata != 0 && key == "managedFields":
		d.vhash, d.vshared = 0, false
		return d.skip()
	case m&list != 0 && key == "items":
		d.vhash, d.vshared = 0, false
		return d.listItems()
	case m&root != 0 && key == "metadata" && d.peek() == '{':
		if d.strip {
			v, err = d.object(metadata | own)
		} else {
			v, err = d.object(own)
		}
	default:
		v, err = d.value()
	}
	if err != nil {
		return err
	}
	if m&document != 0 {
		if err := d.gvk.read(key, v); err != nil {
			return err
		}
	}
	d.pairs = append(d.pairs, pair{key, v})
	d.vhash = memberHash(keyHash, d.vhash)
	return nil
}

// buildShared pops the pairs above base into a map, or returns the shared map equal to
// them when they may be shared (share.go), and sets the map's hash and whether it is shared.
func (d *decoder) buildShared(base int, h uint64, shared bool) map[string]any {
	ps := d.pairs[base:]
	if !shared || len(ps) > maxShared {
		d.vshared = false
		return d.buildMap(base)
	}
	h = mix(h + uint64(len(ps)))
	d.vhash, d.vshared = h, true
	if m, ok := d.sharedMap(ps, h); ok {
		clear(ps)
		d.pairs = d.pairs[:base]
		return m
	}
	m := d.buildMap(base)
	if len(m) < len(ps) { // a repeated key: the map is not what the hash describes
		d.vshared = false
		return m
	}
	d.share(h, m)
	return m
}

// buildMap pops the pairs above base into a map of their size; a repeated key keeps its
// last value, as encoding/json does.
func (d *decoder) buildMap(base int) map[string]any {
	ps := d.pairs[base:]
	out := make(map[string]any, len(ps))
	for _, p := range ps {
		out[p.key] = p.val
	}
	clear(ps)
	d.pairs = d.pairs[:base]
	return out
}

// array decodes the array at the position.
func (d *decoder) array() ([]any, error) {
	d.pos++ // '['
	if err := d.push(); err != nil {
		return nil, err
	}
	base := len(d.elems)
	h, shared := uint64(hashNum), true
	d.skipSpace()
	if d.peek() == ']' {
		d.pos++
		d.depth--
		return d.buildArray(base, h, shared), nil
	}
	for {
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		h = mix(h ^ d.vhash)
		shared = shared && d.vshared
		d.elems = append(d.elems, v)
		d.skipSpace()
		switch d.peek() {
		case ',':
			d.pos++
			continue
		case ']':
			d.pos++
		default:
			return nil, d.syntaxError("',' or ']' after array element")
		}
		break
	}
	d.depth--
	return d.buildArray(base, h, shared), nil
}

// buildArray pops the elements above base into a slice, or returns the shared slice equal
// to them when they may be shared (share.go), and sets its hash and whether it is shared.
func (d *decoder) buildArray(base int, h uint64, shared bool) []any {
	es := d.elems[base:]
	d.vhash, d.vshared = h, shared && len(es) <= maxShared
	var out []any
	if d.vshared {
		out, _ = d.sharedArray(es, h)
	}
	if out == nil {
		out = make([]any, len(es))
		copy(out, es)
		if d.vshared {
			d.share(h, out)
		}
	}
	clear(es)
	d.elems = d.elems[:base]
	return out
}
