package jstest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// objectsOf reads harness({objects}): each item is an object, or the path (absolute, or
// relative to the test file) of a YAML or JSON file with one or more documents (List kinds are expanded), or
// of a recording (.jsonl), whose initial list it takes.
func objectsOf(dir string, items []any) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for i, item := range items {
		objs, err := itemObjects(dir, item)
		if err != nil {
			return nil, fmt.Errorf("objects[%d]: %w", i, err)
		}
		out = append(out, objs...)
	}
	return out, nil
}

// itemObjects reads one item of objects (or h.add's argument): an object, or a file's.
func itemObjects(dir string, item any) ([]*unstructured.Unstructured, error) {
	switch v := item.(type) {
	case map[string]any:
		return expand(&unstructured.Unstructured{Object: v})
	case string:
		read := readFixture
		if strings.HasSuffix(v, ".jsonl") {
			read = recordedObjects
		}
		path, err := locate(dir, v)
		if err != nil {
			return nil, err
		}
		return read(path)
	default:
		return nil, fmt.Errorf("want an object or a file name, got %T", item)
	}
}

// readFixture decodes every document of a YAML or JSON file.
func readFixture(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read fixture: %w", err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for doc := 1; ; doc++ {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read fixture %s, document %d: %w", path, doc, err)
		}
		if len(m) == 0 {
			continue // an empty document between two ---
		}
		objs, err := expand(&unstructured.Unstructured{Object: m})
		if err != nil {
			return nil, fmt.Errorf("read fixture %s, document %d: %w", path, doc, err)
		}
		out = append(out, objs...)
	}
}

// expand returns a List's items, or the object itself; every object needs apiVersion and kind.
func expand(u *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	if u.GetAPIVersion() == "" || u.GetKind() == "" {
		return nil, errors.New("an object needs apiVersion and kind")
	}
	if !strings.HasSuffix(u.GetKind(), "List") || u.Object["items"] == nil {
		return []*unstructured.Unstructured{u}, nil
	}
	list, err := u.ToList()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", u.GetKind(), err)
	}
	var out []*unstructured.Unstructured
	for i := range list.Items {
		objs, err := expand(&list.Items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}
