package typegen

import (
	"strings"
	"unicode"
)

// uniqueNames gives each component a TypeScript name: the last segment of its dotted name
// ("io.k8s.api.apps.v1.Deployment" is Deployment), with as many segments before it as it takes
// to tell apart components that would otherwise share a name (CoreV1Event, EventsV1Event).
// full must be sorted, which makes the result deterministic.
func uniqueNames(full []string) map[string]string {
	depth := make(map[string]int, len(full))
	for _, f := range full {
		depth[f] = 1
	}
	for {
		byName := map[string][]string{}
		for _, f := range full {
			n := nameOf(f, depth[f])
			byName[n] = append(byName[n], f)
		}
		grew := false
		for _, group := range byName {
			if len(group) < 2 {
				continue
			}
			for _, f := range group {
				if depth[f] < len(strings.Split(f, ".")) {
					depth[f]++
					grew = true
				}
			}
		}
		if !grew {
			out := make(map[string]string, len(full))
			for _, f := range full {
				out[f] = nameOf(f, depth[f])
			}
			return out
		}
	}
}

// nameOf joins the last n segments of a dotted name as one identifier.
func nameOf(full string, n int) string {
	segs := strings.Split(full, ".")
	if n > len(segs) {
		n = len(segs)
	}
	var b strings.Builder
	for _, s := range segs[len(segs)-n:] {
		b.WriteString(identifier(s))
	}
	return b.String()
}

// identifier turns one segment into PascalCase letters, digits and underscores.
func identifier(seg string) string {
	var b strings.Builder
	upper := true
	for _, r := range seg {
		switch {
		case r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			if upper {
				r = unicode.ToUpper(r)
				upper = false
			}
			if b.Len() == 0 && unicode.IsDigit(r) {
				b.WriteByte('_')
			}
			b.WriteRune(r)
		default:
			upper = true // "-", "$", ...: dropped, and the next letter capitalised
		}
	}
	return b.String()
}
