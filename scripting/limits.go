package scripting

import (
	"github.com/dop251/goja"
)

// Limits on what a script can make the runner do in one step. Values crossing from JS into
// Go (log fields, k8s bodies, util arguments, index values, keys) are walked with a budget, so
// a script's mistake or malice is a catchable RangeError instead of an allocation that takes
// the process down. Built-ins that loop over a length without looking at the deadline are
// guarded the same way (guard.go). docs/scripts.md lists these numbers.
const (
	// maxDepth bounds recursion over values, which may be cyclic. Deeper parts of a value are
	// left out of logs and diffs and make util.clone and k8s bodies throw.
	maxDepth = 100
	// maxItems is the most array elements plus object properties one value may have.
	maxItems = 1 << 20
	// maxChars is the most string characters (UTF-16 units, keys included) one value may hold.
	maxChars = 16 << 20
	// maxLength is the longest array a built-in may walk in one call: a sparse array's
	// length costs time even when it holds nothing, and the deadline cannot stop a built-in.
	maxLength = 1 << 22
	// maxKeyLength bounds a ctx.enqueue key; Kubernetes keys are at most 317 bytes.
	maxKeyLength = 1024
)

// budget counts what one value crossing into Go has cost so far.
type budget struct {
	env   *callEnv
	what  string // the binding, for messages: "log.info", "k8s.create"
	items int
	chars int
}

func (e *callEnv) budget(what string) *budget { return &budget{env: e, what: what} }

// addItems charges n array elements or object properties, throwing when over the limit. It
// is called before the items are visited, so a sparse array's length is refused up front.
func (b *budget) addItems(n int64, kind string) {
	b.room(n, kind)
	b.items += int(n)
}

// room throws unless n more items fit.
func (b *budget) room(n int64, kind string) {
	if n < 0 || n > int64(maxItems-b.items) {
		b.env.throwRange("%s: value too large: %s %d (the limit is %d elements and properties in one value)",
			b.what, kind, n, maxItems)
	}
}

// addChars charges a string of n characters.
func (b *budget) addChars(n int) {
	if n > maxChars-b.chars {
		b.env.throwRange("%s: value too large: more than %d Mi characters of strings in one value", b.what, maxChars>>20)
	}
	b.chars += n
}

// addString charges a JS string by its length, without exporting it.
func (b *budget) addString(v goja.Value) {
	b.addChars(jsLength(v))
}

// jsLength is the length of a JS string value in UTF-16 units, read without copying it.
func jsLength(v goja.Value) int {
	if str, ok := v.(goja.String); ok {
		return str.Length()
	}
	return len(v.String())
}
