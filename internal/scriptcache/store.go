package scriptcache

import (
	"fmt"
	"slices"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/jsinformer/jsinformer/scripting"
)

// Key names one object in a store: the resource's --gvr spelling and the client-go
// "namespace/name" (or "name") key.
type Key struct {
	Resource string
	Object   string
}

// Store is the world as one script version has been shown it: the last state of every object
// its events carried, plus the values its index functions returned for them. The version's
// worker writes; handlers (on the worker, or reconcile workers) read. Objects are the
// informer's shared, immutable ones.
//
// A reload fills a new store with every cached object at once, so the layout keeps per-object
// bookkeeping to one map entry: the object and its index values live together, and indexes
// are addressed by position (the order of Definition.Indexers), not by name.
type Store struct {
	mu      sync.RWMutex
	objects map[string]map[string]entry // resource -> key -> entry
	names   []string                    // index names; position i is indexes[i]
	indexes []map[string]map[Key]struct{}
}

// entry is one object and, per index position, the values it is filed under (nil: none).
type entry struct {
	obj    scripting.Object
	values [][]string
}

// New returns an empty store whose index positions follow indexNames.
func New(indexNames []string) *Store {
	s := &Store{
		objects: map[string]map[string]entry{},
		names:   indexNames,
		indexes: make([]map[string]map[Key]struct{}, len(indexNames)),
	}
	for i := range s.indexes {
		s.indexes[i] = map[string]map[Key]struct{}{}
	}
	return s
}

// Reserve sizes the map of resource for n objects, so filling it from a large cache does not
// rehash it over and over. It does nothing once the resource holds objects.
func (s *Store) Reserve(resource string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.objects[resource]) == 0 {
		s.objects[resource] = make(map[string]entry, n)
	}
}

// Set records obj and its index values: values[i] for index i, nil or short meaning "not
// indexed".
func (s *Store) Set(k Key, obj scripting.Object, values [][]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	byKey := s.objects[k.Resource]
	if byKey == nil {
		byKey = map[string]entry{}
		s.objects[k.Resource] = byKey
	}
	if old, ok := byKey[k.Object]; ok {
		s.unindex(k, old.values)
	}
	byKey[k.Object] = entry{obj: obj, values: values}
	for i, vals := range values {
		for _, v := range vals {
			s.addIndex(i, v, k)
		}
	}
}

// Remove forgets the object and its index entries.
func (s *Store) Remove(k Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	byKey := s.objects[k.Resource]
	if old, ok := byKey[k.Object]; ok {
		s.unindex(k, old.values)
		delete(byKey, k.Object)
	}
}

func (s *Store) addIndex(i int, value string, k Key) {
	byValue := s.indexes[i]
	set := byValue[value]
	if set == nil {
		set = map[Key]struct{}{}
		byValue[value] = set
	}
	set[k] = struct{}{}
}

// unindex removes k from the index values it was filed under; called with mu held.
func (s *Store) unindex(k Key, values [][]string) {
	for i, vals := range values {
		for _, v := range vals {
			set := s.indexes[i][v]
			delete(set, k)
			if len(set) == 0 {
				delete(s.indexes[i], v)
			}
		}
	}
}

func (s *Store) get(resource, key string) scripting.Object {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.objects[resource][key].obj
}

func (s *Store) list(resource, namespace string, selector labels.Selector) []scripting.Object {
	s.mu.RLock()
	defer s.mu.RUnlock()
	keys := make([]string, 0, len(s.objects[resource]))
	for key, e := range s.objects[resource] {
		if namespace != "" && namespaceOf(e.obj) != namespace {
			continue
		}
		if selector.Empty() || selector.Matches(labels.Set(labelsOf(e.obj))) {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	out := make([]scripting.Object, len(keys))
	for i, key := range keys {
		out[i] = s.objects[resource][key].obj
	}
	return out
}

// byIndex returns the keys filed under value, sorted for stable answers.
func (s *Store) byIndex(index, value string) ([]Key, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.indexedKeys(index, value)
}

// byIndexObjects returns the objects filed under value, in byIndex's order, read under the
// same lock as the keys so the two always agree.
func (s *Store) byIndexObjects(index, value string) ([]scripting.Object, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	keys, err := s.indexedKeys(index, value)
	if err != nil {
		return nil, err
	}
	out := make([]scripting.Object, len(keys))
	for i, k := range keys {
		out[i] = s.objects[k.Resource][k.Object].obj
	}
	return out, nil
}

// indexedKeys is byIndex; called with mu held.
func (s *Store) indexedKeys(index, value string) ([]Key, error) {
	i := slices.Index(s.names, index)
	if i < 0 {
		return nil, fmt.Errorf("query index %q: no such index", index)
	}
	byValue := s.indexes[i]
	keys := make([]Key, 0, len(byValue[value]))
	for k := range byValue[value] {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Resource != keys[j].Resource {
			return keys[i].Resource < keys[j].Resource
		}
		return keys[i].Object < keys[j].Object
	})
	return keys, nil
}

// Size is the number of objects held, for tests and metrics.
func (s *Store) Size() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	for _, byKey := range s.objects {
		n += len(byKey)
	}
	return n
}

func namespaceOf(obj scripting.Object) string {
	meta, _ := obj["metadata"].(map[string]any)
	ns, _ := meta["namespace"].(string)
	return ns
}

func labelsOf(obj scripting.Object) map[string]string {
	meta, _ := obj["metadata"].(map[string]any)
	raw, _ := meta["labels"].(map[string]any)
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}
