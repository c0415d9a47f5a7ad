package scriptcache

import (
	"sort"

	"github.com/jsinformer/jsinformer/scripting"
)

// What the debug API reads of a store (engine's inspection views). Each method takes the read
// lock for its own duration only: the answers are snapshots, consistent per call.

// Get returns the object of resource stored under key, or nil.
func (s *Store) Get(resource, key string) scripting.Object { return s.get(resource, key) }

// Keys lists the keys of resource the store holds, sorted.
func (s *Store) Keys(resource string) []string {
	s.mu.RLock()
	out := make([]string, 0, len(s.objects[resource]))
	for k := range s.objects[resource] {
		out = append(out, k)
	}
	s.mu.RUnlock()
	sort.Strings(out)
	return out
}

// Values returns the index values stored with one object, by index position, and whether it
// is stored.
func (s *Store) Values(resource, key string) ([][]string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.objects[resource][key]
	return e.values, ok
}

// IndexCounts is one index of a store: for each value, how many objects are filed under it.
type IndexCounts struct {
	Name   string
	Counts map[string]int
}

// Counts returns every index's value counts, in index position order.
func (s *Store) Counts() []IndexCounts {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]IndexCounts, len(s.names))
	for i, name := range s.names {
		c := make(map[string]int, len(s.indexes[i]))
		for value, set := range s.indexes[i] {
			c[value] = len(set)
		}
		out[i] = IndexCounts{Name: name, Counts: c}
	}
	return out
}

// ByIndex returns the keys filed under value in index, sorted.
func (s *Store) ByIndex(index, value string) ([]Key, error) { return s.byIndex(index, value) }
