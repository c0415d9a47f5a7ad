package typegen

import (
	"maps"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Names are chosen so that a resource's interface keeps its name whatever else is generated:
//
//  1. Resources first: each is named after its kind. When several resources share a kind (two
//     versions of one CRD, or two groups), the one marked Preferred (the storage or preferred
//     version), else the first requested, keeps the plain name; the others are qualified by
//     their version (V1beta1VirtualService), and by their group's first label as well when
//     the group differs (MonitoringV1Probe, CoreV1Event).
//  2. JsonValue, the free-form type, is reserved.
//  3. The resources' nested object shapes are named after the resource and the path to them
//     (ApplicationSpecSource); a clash there gets a number.
//  4. The other schemas take the last segment of their dotted name (PodSpec), with as many
//     segments before it as it takes to tell them apart from each other and from the names
//     above (CoreV1Probe beside a Probe resource, CoreV1Event beside EventsV1Event).
//  5. Their nested object shapes, as in 3.

// rootNames names the resources; order lists them in the order requested.
func rootNames(order []string, roots map[string]Resource) map[string]string {
	byKind := map[string][]string{}
	for _, full := range order {
		k := identifier(roots[full].Kind)
		byKind[k] = append(byKind[k], full)
	}
	names := map[string]string{}
	taken := map[string]bool{jsonValue: true}
	for _, full := range order { // winners first, so that no qualified name takes a plain one
		group := byKind[identifier(roots[full].Kind)]
		if winner(group, roots) == full {
			names[full] = identifier(roots[full].Kind)
			taken[names[full]] = true
		}
	}
	for _, full := range order {
		if _, ok := names[full]; ok {
			continue
		}
		r, w := roots[full], roots[winner(byKind[identifier(roots[full].Kind)], roots)]
		qualified := identifier(r.Version) + identifier(r.Kind)
		if r.Group != w.Group {
			qualified = groupLabel(r.Group) + qualified
		}
		names[full] = free(qualified, taken)
		taken[names[full]] = true
	}
	return names
}

// winner is the resource of group (sharing a kind) that keeps the plain name.
func winner(group []string, roots map[string]Resource) string {
	for _, full := range group {
		if roots[full].Preferred {
			return full
		}
	}
	return group[0]
}

// groupLabel is the group's first DNS label as an identifier: Core for the core group.
func groupLabel(group string) string {
	if group == "" {
		return "Core"
	}
	return identifier(strings.SplitN(group, ".", 2)[0])
}

// free is name, or name followed by the first number that makes it unused.
func free(name string, taken map[string]bool) string {
	if !taken[name] {
		return name
	}
	for i := 2; ; i++ {
		if n := name + strconv.Itoa(i); !taken[n] {
			return n
		}
	}
}

// uniqueNames gives each component a TypeScript name: the last segment of its dotted name
// ("io.k8s.api.apps.v1.Deployment" is Deployment), with as many segments before it as it takes
// to tell apart components that would otherwise share a name (CoreV1Event, EventsV1Event), or
// take a name in taken. A version segment never qualifies a name alone (CoreV1Probe, not
// V1Probe). full must be sorted, which makes the result deterministic.
func uniqueNames(full []string, taken map[string]bool) map[string]string {
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
		for n, group := range byName {
			if len(group) < 2 && !taken[n] {
				continue
			}
			for _, f := range group {
				if d := deeper(f, depth[f]); d != depth[f] {
					depth[f] = d
					grew = true
				}
			}
		}
		if !grew {
			break
		}
	}
	out := make(map[string]string, len(full))
	used := map[string]bool{}
	maps.Copy(used, taken)
	for _, f := range full {
		out[f] = free(nameOf(f, depth[f]), used)
		used[out[f]] = true
	}
	return out
}

var versionRE = regexp.MustCompile(`^v\d+((alpha|beta)\d*)?$`)

// deeper is the next depth of full's name: one more segment, two when that one is a version.
func deeper(full string, depth int) int {
	segs := strings.Split(full, ".")
	if depth >= len(segs) {
		return depth
	}
	depth++
	if versionRE.MatchString(segs[len(segs)-depth]) && depth < len(segs) {
		depth++
	}
	return depth
}

// nameOf joins the last n segments of a dotted name as one identifier.
func nameOf(full string, n int) string {
	segs := strings.Split(full, ".")
	n = min(n, len(segs))
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
