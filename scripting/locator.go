package scripting

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/dop251/goja"

	"github.com/jsinformer/jsinformer/internal/editdistance"
)

// locator points validation messages at the line of the original source that defines a key.
// Property positions are not kept by the runtime, so this is a textual best effort: the first
// place the key is written as a property (`key:`, `"key":`, `key(`), else its first mention.
type locator struct {
	file string
	src  []byte
}

func (l locator) line(key string) int {
	q := regexp.QuoteMeta(key)
	for _, pattern := range []string{
		`(?:^|[^\w$.])["']?(` + q + `)["']?\s*[:(]`,
		`(?:^|[^\w$])(` + q + `)(?:[^\w$]|$)`,
	} {
		if m := regexp.MustCompile(`(?m)` + pattern).FindSubmatchIndex(l.src); m != nil {
			return bytes.Count(l.src[:m[2]], []byte("\n")) + 1
		}
	}
	return 0
}

// checkKeys rejects own keys of obj that are not in valid, suggesting the closest valid key,
// which catches typos such as "onadd" that would otherwise be silently ignored.
func (l locator) checkKeys(obj *goja.Object, where string, valid []string) error {
	for _, k := range obj.Keys() {
		if slices.Contains(valid, k) {
			continue
		}
		msg := fmt.Sprintf("unknown key '%s' in the definition", k)
		if where != "" {
			msg = fmt.Sprintf("unknown key '%s' in '%s'", k, where)
		}
		if s := closest(k, valid); s != "" {
			msg += fmt.Sprintf("; did you mean '%s'?", s)
		} else {
			msg += "; valid keys are " + strings.Join(valid, ", ")
		}
		return invalidf(l.file, l.line(k), msg)
	}
	return nil
}

// lastKey is the last segment of a dotted key path such as "indexers.byImage".
func lastKey(path string) string {
	return path[strings.LastIndexByte(path, '.')+1:]
}

// closest returns the valid key nearest to k (case-insensitively), or "" when none is close.
func closest(k string, valid []string) string {
	best, bestDist := "", max(2, len(k)/3)+1
	for _, v := range valid {
		if d := editdistance.Levenshtein(strings.ToLower(k), strings.ToLower(v)); d < bestDist {
			best, bestDist = v, d
		}
	}
	return best
}
