package engine

import (
	"fmt"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/jsinformer/jsinformer/scripting"
)

// objectKey names one object in a version's store: the resource's --gvr spelling and the
// client-go "namespace/name" (or "name") key.
type objectKey struct {
	resource string
	key      string
}

// store is the world as one script version has been shown it: the last state of every object
// its events carried, plus the values its index functions returned for them. The version's
// worker writes; handlers (on the worker, or reconcile workers) read. Objects are the
// informer's shared, immutable ones.
type store struct {
	mu      sync.RWMutex
	objects map[string]map[string]scripting.Object       // resource -> key -> object
	indexes map[string]map[string]map[objectKey]struct{} // index -> value -> keys
	values  map[objectKey]map[string][]string            // key -> index -> values last computed
}

func newStore(indexNames []string) *store {
	s := &store{
		objects: map[string]map[string]scripting.Object{},
		indexes: map[string]map[string]map[objectKey]struct{}{},
		values:  map[objectKey]map[string][]string{},
	}
	for _, name := range indexNames {
		s.indexes[name] = map[string]map[objectKey]struct{}{}
	}
	return s
}

// set records obj and its index values (nil values for an index means "not indexed").
func (s *store) set(k objectKey, obj scripting.Object, values map[string][]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	byKey := s.objects[k.resource]
	if byKey == nil {
		byKey = map[string]scripting.Object{}
		s.objects[k.resource] = byKey
	}
	byKey[k.key] = obj
	s.unindex(k)
	for name, vals := range values {
		for _, v := range vals {
			s.addIndex(name, v, k)
		}
	}
	if len(values) > 0 {
		s.values[k] = values
	}
}

// remove forgets the object and its index entries.
func (s *store) remove(k objectKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.objects[k.resource], k.key)
	s.unindex(k)
}

func (s *store) addIndex(name, value string, k objectKey) {
	byValue := s.indexes[name]
	set := byValue[value]
	if set == nil {
		set = map[objectKey]struct{}{}
		byValue[value] = set
	}
	set[k] = struct{}{}
}

// unindex removes k from every index value it was last filed under; called with mu held.
func (s *store) unindex(k objectKey) {
	for name, vals := range s.values[k] {
		for _, v := range vals {
			set := s.indexes[name][v]
			delete(set, k)
			if len(set) == 0 {
				delete(s.indexes[name], v)
			}
		}
	}
	delete(s.values, k)
}

func (s *store) get(resource, key string) scripting.Object {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.objects[resource][key]
}

func (s *store) list(resource, namespace string, selector labels.Selector) []scripting.Object {
	s.mu.RLock()
	defer s.mu.RUnlock()
	keys := make([]string, 0, len(s.objects[resource]))
	for key, obj := range s.objects[resource] {
		if namespace != "" && namespaceOf(obj) != namespace {
			continue
		}
		if selector.Empty() || selector.Matches(labels.Set(labelsOf(obj))) {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	out := make([]scripting.Object, len(keys))
	for i, key := range keys {
		out[i] = s.objects[resource][key]
	}
	return out
}

// byIndex returns the keys filed under value, sorted for stable answers.
func (s *store) byIndex(index, value string) ([]objectKey, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.indexedKeys(index, value)
}

// byIndexObjects returns the objects filed under value, in byIndex's order, read under the
// same lock as the keys so the two always agree.
func (s *store) byIndexObjects(index, value string) ([]scripting.Object, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	keys, err := s.indexedKeys(index, value)
	if err != nil {
		return nil, err
	}
	out := make([]scripting.Object, len(keys))
	for i, k := range keys {
		out[i] = s.objects[k.resource][k.key]
	}
	return out, nil
}

// indexedKeys is byIndex; called with mu held.
func (s *store) indexedKeys(index, value string) ([]objectKey, error) {
	byValue, ok := s.indexes[index]
	if !ok {
		return nil, fmt.Errorf("query index %q: no such index", index)
	}
	keys := make([]objectKey, 0, len(byValue[value]))
	for k := range byValue[value] {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].resource != keys[j].resource {
			return keys[i].resource < keys[j].resource
		}
		return keys[i].key < keys[j].key
	})
	return keys, nil
}

// size is the number of objects held, for tests and metrics.
func (s *store) size() int {
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
