package unstructuredjson_test

import (
	"fmt"
	"math"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// reference is the JSON serializer client-go's dynamic client decodes responses with, and
// the one it decodes watch frames with.
var reference, referenceStream = func() (runtime.Serializer, runtime.Serializer) {
	for _, info := range dynamic.ConfigFor(&rest.Config{}).NegotiatedSerializer.SupportedMediaTypes() {
		if info.MediaType == runtime.ContentTypeJSON {
			return info.Serializer, info.StreamSerializer.Serializer
		}
	}
	panic("the dynamic client has no JSON serializer")
}()

// refObject decodes data as the dynamic client's Get does, then strips managedFields as
// the informer's transform does when strip is set.
func refObject(data []byte, strip bool) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if _, _, err := reference.Decode(data, nil, u); err != nil {
		return nil, err
	}
	if strip {
		stripManagedFields(u.Object)
	}
	return u, nil
}

// refList decodes data as the dynamic client's List does, then strips the items'
// managedFields when strip is set.
func refList(data []byte, strip bool) (*unstructured.UnstructuredList, error) {
	l := &unstructured.UnstructuredList{}
	if _, _, err := reference.Decode(data, nil, l); err != nil {
		return nil, err
	}
	if strip {
		for i := range l.Items {
			stripManagedFields(l.Items[i].Object)
		}
	}
	return l, nil
}

// refWatchEvent reads a frame as client-go's watch decoder does.
func refWatchEvent(data []byte) (string, []byte, error) {
	var got metav1.WatchEvent
	if _, _, err := referenceStream.Decode(data, nil, &got); err != nil {
		return "", nil, err
	}
	return got.Type, got.Object.Raw, nil
}

func stripManagedFields(obj map[string]any) {
	if meta, ok := obj["metadata"].(map[string]any); ok {
		delete(meta, "managedFields")
	}
}

// diff returns "" when a and b are the same decoded JSON, down to the Go types, the sign
// of zero, and nil versus empty; otherwise where they first differ.
func diff(path string, a, b any) string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || (x == nil) != (y == nil) || len(x) != len(y) {
			return fmt.Sprintf("%s: %#v != %#v", path, a, b)
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok {
				return fmt.Sprintf("%s: key %q missing", path, k)
			}
			if d := diff(path+"."+k, v, w); d != "" {
				return d
			}
		}
		return ""
	case []any:
		y, ok := b.([]any)
		if !ok || (x == nil) != (y == nil) || len(x) != len(y) {
			return fmt.Sprintf("%s: %#v != %#v", path, a, b)
		}
		for i := range x {
			if d := diff(fmt.Sprintf("%s[%d]", path, i), x[i], y[i]); d != "" {
				return d
			}
		}
		return ""
	case float64:
		if y, ok := b.(float64); !ok || math.Float64bits(x) != math.Float64bits(y) {
			return fmt.Sprintf("%s: %#v != %#v", path, a, b)
		}
		return ""
	}
	if a != b {
		return fmt.Sprintf("%s: %#v (%T) != %#v (%T)", path, a, a, b, b)
	}
	return ""
}

// diffList compares two decoded lists, items and all.
func diffList(a, b *unstructured.UnstructuredList) string {
	if d := diff("list", a.Object, b.Object); d != "" {
		return d
	}
	if (a.Items == nil) != (b.Items == nil) || len(a.Items) != len(b.Items) {
		return fmt.Sprintf("items: %d (nil %t) != %d (nil %t)", len(a.Items), a.Items == nil, len(b.Items), b.Items == nil)
	}
	for i := range a.Items {
		if d := diff(fmt.Sprintf("items[%d]", i), a.Items[i].Object, b.Items[i].Object); d != "" {
			return d
		}
	}
	return ""
}

func mustNotDiff(t *testing.T, d string) {
	t.Helper()
	if d != "" {
		t.Fatalf("differs from apimachinery: %s", d)
	}
}
