package scripting

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/dop251/goja"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// maxWatches bounds the watch list, which a script could give any length.
const maxWatches = 1000

var watchKeys = []string{"resource", "namespace", "labelSelector", "fieldSelector"}

// watchEntryKeys are what a watch object may have: watchKeys, read here, and enqueue, read by
// readEnqueue.
var watchEntryKeys = append(slices.Clone(watchKeys), "enqueue")

// readWatch reads the optional `watch` field: a resource string, an object, or an array of
// either. Nil means the script did not say.
func readWatch(v goja.Value, l locator) ([]WatchSpec, error) {
	if isMissing(v) {
		return nil, nil
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() != "Array" {
		spec, err := readWatchEntry(v, "watch", l)
		if err != nil {
			return nil, err
		}
		return []WatchSpec{spec}, nil
	}
	n := int(min(obj.Get("length").ToInteger(), maxWatches+1))
	switch {
	case n == 0:
		return nil, invalidf(l.file, l.line("watch"), "'watch' must name at least one resource")
	case n > maxWatches:
		return nil, invalidf(l.file, l.line("watch"), fmt.Sprintf("'watch' names more than %d resources", maxWatches))
	}
	specs := make([]WatchSpec, 0, n)
	for i := range n {
		spec, err := readWatchEntry(obj.Get(strconv.Itoa(i)), fmt.Sprintf("watch[%d]", i), l)
		if err != nil {
			return nil, err
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

func readWatchEntry(v goja.Value, where string, l locator) (WatchSpec, error) {
	if s, ok := v.Export().(string); ok {
		if s == "" {
			return WatchSpec{}, invalidf(l.file, l.line("watch"), fmt.Sprintf("'%s' must not be empty", where))
		}
		return WatchSpec{Resource: s}, nil
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() == "Array" || isFunction(obj) {
		return WatchSpec{}, invalidf(l.file, l.line("watch"), fmt.Sprintf("'%s' must be a resource string "+
			"or an object {resource, namespace, labelSelector, fieldSelector}, got %s", where, typeName(v)))
	}
	if err := l.checkKeys(obj, where, watchEntryKeys); err != nil {
		return WatchSpec{}, err
	}
	var spec WatchSpec
	fields := []*string{&spec.Resource, &spec.Namespace, &spec.LabelSelector, &spec.FieldSelector}
	for i, key := range watchKeys {
		f := obj.Get(key)
		if isMissing(f) {
			continue
		}
		s, ok := f.Export().(string)
		if !ok {
			return WatchSpec{}, invalidf(l.file, l.line(key), fmt.Sprintf("'%s.%s' must be a string, got %s",
				where, key, typeName(f)))
		}
		*fields[i] = s
	}
	if spec.Resource == "" {
		return WatchSpec{}, invalidf(l.file, l.line("watch"), fmt.Sprintf("'%s.resource' must name a resource", where))
	}
	if err := checkSelectors(spec.LabelSelector, spec.FieldSelector); err != nil {
		return WatchSpec{}, invalidf(l.file, l.line("watch"), fmt.Sprintf("'%s': %v", where, err))
	}
	return spec, nil
}

// checkSelectors validates selectors the way the API server will, so that a malformed one is
// a load error rather than a watch that never syncs.
func checkSelectors(label, field string) error {
	if _, err := labels.Parse(label); err != nil {
		return fmt.Errorf("labelSelector %q is not a valid label selector: %w", label, err)
	}
	if _, err := fields.ParseSelector(field); err != nil {
		return fmt.Errorf("fieldSelector %q is not a valid field selector: %w", field, err)
	}
	return nil
}
