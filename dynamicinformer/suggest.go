package dynamicinformer

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/jsinformer/jsinformer/internal/editdistance"
)

// unknown builds the error for a name that matched nothing, listing the closest known names.
func (r *Resolver) unknown(name string) error {
	candidates := r.knownNames()
	close := closest(resourcePart(name), candidates, 3)
	if len(close) == 0 {
		return fmt.Errorf("resolve resource %q: %w (see `kubectl api-resources`)", name, ErrUnknownResource)
	}
	return fmt.Errorf("resolve resource %q: %w; did you mean %s?", name, ErrUnknownResource,
		strings.Join(close, ", "))
}

// resourcePart is the plural-or-short name inside any accepted spelling.
func resourcePart(name string) string {
	name = strings.ToLower(name)
	if i := strings.LastIndex(name, "/"); i >= 0 {
		return name[i+1:]
	}
	if i := strings.Index(name, "."); i >= 0 {
		return name[:i]
	}
	return name
}

// knownNames lists "resource.group" for every served resource (and short names), best effort.
func (r *Resolver) knownNames() map[string]string {
	names := map[string]string{}
	lists, _ := r.cached.ServerPreferredResources() // partial results are still useful
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, res := range list.APIResources {
			full := FormatGVR(gv.WithResource(res.Name))
			names[res.Name] = full
			names[res.SingularName] = full
			for _, short := range res.ShortNames {
				names[short] = full
			}
		}
	}
	return names
}

// closest returns up to n full names whose short or plural names are near want.
func closest(want string, names map[string]string, n int) []string {
	type scored struct {
		full string
		dist int
	}
	best := map[string]int{}
	for name, full := range names {
		d := editdistance.Levenshtein(want, name)
		if strings.HasPrefix(name, want) || strings.HasPrefix(want, name) {
			d = min(d, 1)
		}
		if d <= max(2, len(want)/3) {
			if old, ok := best[full]; !ok || d < old {
				best[full] = d
			}
		}
	}
	var out []scored
	for full, d := range best {
		out = append(out, scored{full, d})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].dist != out[j].dist {
			return out[i].dist < out[j].dist
		}
		return out[i].full < out[j].full
	})
	var result []string
	for i := 0; i < len(out) && i < n; i++ {
		result = append(result, out[i].full)
	}
	return result
}
