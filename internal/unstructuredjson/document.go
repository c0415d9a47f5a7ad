package unstructuredjson

import (
	"errors"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Options configure a decode.
type Options struct {
	// DropManagedFields skips metadata.managedFields of every object returned.
	DropManagedFields bool
	// Keep, when set, is asked about every item of a list (List, ReadList) as soon as it is
	// decoded, once per item; an item it refuses is left out of the result at once, so that
	// ReadList never holds it past the next item. It sees the item before the list's kind
	// is filled into it. Not used for single objects and watch frames.
	Keep func(item map[string]any) bool
}

// ErrUnusual is returned for a well-formed document the reference decoder treats in a way
// this package does not reproduce: a top-level key that differs from "kind" or
// "apiVersion" only in case, a non-string kind or apiVersion, a malformed apiVersion, a
// missing kind, or a list whose items are not objects. Decode it with the reference.
var ErrUnusual = errors.New("decode json: unusual document, use the reference decoder")

// typeMeta is the document's kind and apiVersion as apimachinery's json.SimpleMetaFactory
// reads them before decoding: with encoding/json into two string fields, which matches
// keys case-insensitively, fails on a non-string value and ignores null.
type typeMeta struct {
	apiVersion, kind string
}

// read takes a top-level member into account. Anything the reference would read
// differently from the exact key is ErrUnusual.
func (t *typeMeta) read(key string, v any) error {
	var field *string
	switch {
	case key == "kind":
		field = &t.kind
	case key == "apiVersion":
		field = &t.apiVersion
	case strings.EqualFold(key, "kind"), strings.EqualFold(key, "apiVersion"):
		return ErrUnusual
	default:
		return nil
	}
	switch s := v.(type) {
	case string:
		*field = s
	case nil: // encoding/json leaves the field as it was
	default:
		return ErrUnusual
	}
	return nil
}

// GroupVersionKind is the document's type as the reference reads it; an apiVersion it
// cannot parse is ErrUnusual.
func (t typeMeta) groupVersionKind() (schema.GroupVersionKind, error) {
	gv, err := schema.ParseGroupVersion(t.apiVersion)
	if err != nil {
		return schema.GroupVersionKind{}, ErrUnusual
	}
	return gv.WithKind(t.kind), nil
}

// Object decodes a document holding one object, as apimachinery's JSON serializer decodes
// it into an Unstructured, and returns it with the type read from it (as the serializer's
// json.SimpleMetaFactory reads it). A document without a kind is ErrUnusual.
func Object(data []byte, opts Options) (*unstructured.Unstructured, schema.GroupVersionKind, error) {
	d := getDecoder(data, opts.DropManagedFields)
	defer d.put()
	m, err := d.document(document | root)
	if err != nil {
		return nil, schema.GroupVersionKind{}, err
	}
	gvk, err := d.gvk.groupVersionKind()
	if err != nil {
		return nil, gvk, err
	}
	u := &unstructured.Unstructured{Object: m}
	if u.GetKind() == "" {
		return nil, gvk, ErrUnusual
	}
	return u, gvk, nil
}

// document decodes the whole input as one object with the given mode.
func (d *decoder) document(m mode) (map[string]any, error) {
	d.skipSpace()
	if d.peek() != '{' {
		return nil, ErrUnusual // valid or not, not an object: the reference decides
	}
	obj, err := d.object(m)
	if err != nil {
		return nil, err
	}
	return obj, d.end()
}
