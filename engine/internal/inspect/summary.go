package inspect

import (
	"slices"
	"sort"

	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/internal/scriptcache"
)

// IndexSummaries lists, for every live version with index functions, its indexes; the keys
// of one value are asked of Cache with an inspection.IndexQuery. It takes each version's store read lock
// once and copies only counts.
func IndexSummaries(live []Live) []inspection.IndexSummary {
	out := []inspection.IndexSummary{}
	for _, v := range live {
		if len(v.Indexers()) == 0 {
			continue
		}
		var resources []string
		for _, w := range v.Watches() {
			if !slices.Contains(resources, w.Resource.String()) {
				resources = append(resources, w.Resource.String())
			}
		}
		out = append(out, inspection.IndexSummary{Script: v.Script(), Version: v.Hash(), Resources: resources, Indexes: digest(v.Store())})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Script < out[j].Script })
	return out
}

// digest counts each index's values.
func digest(s *scriptcache.Store) []inspection.IndexDigest {
	counts := s.Counts()
	out := make([]inspection.IndexDigest, len(counts))
	for i, c := range counts {
		d := inspection.IndexDigest{Name: c.Name, Distinct: len(c.Counts), Values: make([]inspection.ValueCount, 0, len(c.Counts))}
		for value, n := range c.Counts {
			d.Values = append(d.Values, inspection.ValueCount{Value: value, Count: n})
		}
		out[i] = d
	}
	for i := range out {
		vs := out[i].Values
		sort.Slice(vs, func(a, b int) bool {
			if vs[a].Count != vs[b].Count {
				return vs[a].Count > vs[b].Count
			}
			return vs[a].Value < vs[b].Value
		})
		if len(vs) > inspection.IndexSummaryValues {
			out[i].Values, out[i].Truncated = vs[:inspection.IndexSummaryValues], true
		}
	}
	return out
}
