package admission

import (
	"slices"
	"strconv"
	"strings"

	"gomodules.xyz/jsonpatch/v2"
)

// sortPatch puts a patch's operations in one order however Go's map iteration ran the diff,
// so the same mutation always prints the same patch (runner check's output, decision records,
// golden files). The order compares paths segment by segment, array indexes as numbers, so an
// object's fields come in name order; it keeps what the diff's order meant: the removals at
// the end of one array still go from the last index down (each must find its element), the
// additions from the first index up, and every other operation names a distinct path that no
// other operation shifts (the diff changes an element in place only below both lengths).
func sortPatch(ops []jsonpatch.Operation) {
	slices.SortStableFunc(ops, func(a, b jsonpatch.Operation) int {
		c := comparePointers(a.Path, b.Path)
		if a.Operation == "remove" && b.Operation == "remove" && sameArray(a.Path, b.Path) {
			return -c
		}
		return c
	})
}

// comparePointers orders two JSON pointers segment by segment, numbers numerically.
func comparePointers(a, b string) int {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if c := compareSegments(as[i], bs[i]); c != 0 {
			return c
		}
	}
	return len(as) - len(bs)
}

func compareSegments(a, b string) int {
	ai, aerr := strconv.Atoi(a)
	bi, berr := strconv.Atoi(b)
	if aerr == nil && berr == nil {
		return ai - bi
	}
	return strings.Compare(a, b)
}

// sameArray reports whether both pointers name elements (numeric last segments) of one parent.
func sameArray(a, b string) bool {
	ai, bi := strings.LastIndexByte(a, '/'), strings.LastIndexByte(b, '/')
	if a[:ai] != b[:bi] {
		return false
	}
	_, aerr := strconv.Atoi(a[ai+1:])
	_, berr := strconv.Atoi(b[bi+1:])
	return aerr == nil && berr == nil
}
