package inspect

import (
	"slices"
	"sort"

	"github.com/jsinformer/jsinformer/internal/scriptcache"
)

// IndexSummaryValues bounds how many values per index IndexSummary lists (the most used).
const IndexSummaryValues = 100

// IndexSummary is one script version's index functions and what they filed.
type IndexSummary struct {
	Script  string `json:"script"`
	Version string `json:"version"`
	// Resources are the resources it watches (canonical), for Cache's index query.
	Resources []string      `json:"resources"`
	Indexes   []IndexDigest `json:"indexes"`
}

// IndexDigest is one index: how many distinct values it holds and the most used of them with
// how many objects each names.
type IndexDigest struct {
	Name      string       `json:"name"`
	Distinct  int          `json:"distinct"`
	Values    []ValueCount `json:"values"` // most objects first, at most IndexSummaryValues
	Truncated bool         `json:"truncated,omitempty"`
}

// ValueCount is one index value and how many objects are filed under it.
type ValueCount struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

// IndexSummaries lists, for every live version with index functions, its indexes; the keys
// of one value are asked of Cache with an IndexQuery. It takes each version's store read lock
// once and copies only counts.
func IndexSummaries(live []Live) []IndexSummary {
	out := []IndexSummary{}
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
		out = append(out, IndexSummary{Script: v.Script(), Version: v.Hash(), Resources: resources, Indexes: digest(v.Store())})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Script < out[j].Script })
	return out
}

// digest counts each index's values.
func digest(s *scriptcache.Store) []IndexDigest {
	counts := s.Counts()
	out := make([]IndexDigest, len(counts))
	for i, c := range counts {
		d := IndexDigest{Name: c.Name, Distinct: len(c.Counts), Values: make([]ValueCount, 0, len(c.Counts))}
		for value, n := range c.Counts {
			d.Values = append(d.Values, ValueCount{Value: value, Count: n})
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
		if len(vs) > IndexSummaryValues {
			out[i].Values, out[i].Truncated = vs[:IndexSummaryValues], true
		}
	}
	return out
}
