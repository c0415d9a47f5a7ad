package unstructuredjson

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// List decodes a list document as apimachinery's JSON serializer decodes it into an
// UnstructuredList: the members other than "items" in its Object, each item an Unstructured
// (an item without kind and apiVersion gets the list's kind without "List" and the list's
// apiVersion). A list without a kind, or with an item that is not an object or null, is
// ErrUnusual.
func List(data []byte, opts Options) (*unstructured.UnstructuredList, error) {
	d := getDecoder(data, opts.DropManagedFields)
	d.keep = opts.Keep
	defer d.put()
	m, err := d.document(document | list)
	if err != nil {
		return nil, err
	}
	return d.listOf(m)
}

// listOf makes the UnstructuredList of a decoded list document: its members m and the
// decoder's items.
func (d *decoder) listOf(m map[string]any) (*unstructured.UnstructuredList, error) {
	if _, err := d.gvk.groupVersionKind(); err != nil {
		return nil, err
	}
	l := &unstructured.UnstructuredList{Object: m, Items: make([]unstructured.Unstructured, len(d.items))}
	if l.GetKind() == "" {
		return nil, ErrUnusual
	}
	apiVersion, itemKind := l.GetAPIVersion(), strings.TrimSuffix(l.GetKind(), "List")
	for i, obj := range d.items {
		item := &l.Items[i]
		item.Object = obj
		// What apimachinery's decodeToList does for typed lists, whose items carry no type.
		if item.GetKind() == "" && item.GetAPIVersion() == "" {
			item.SetKind(itemKind)
			item.SetAPIVersion(apiVersion)
		}
	}
	return l, nil
}

// listItems decodes the value of a list's "items": an array of objects (or nulls, which
// the reference decodes as empty objects), or null for none. A repeated "items" keeps the
// last, as in the reference.
func (d *decoder) listItems() error {
	if d.peek() == 'n' {
		_, err := d.literal()
		d.items = nil
		return err
	}
	if d.peek() != '[' {
		return ErrUnusual
	}
	d.pos++
	if err := d.push(); err != nil {
		return err
	}
	d.items = d.items[:0]
	d.skipSpace()
	if d.peek() == ']' {
		d.pos++
		d.depth--
		return nil
	}
	for {
		if err := d.listItem(); err != nil {
			return err
		}
		d.skipSpace()
		switch d.peek() {
		case ',':
			d.pos++
			continue
		case ']':
			d.pos++
			d.depth--
			return nil
		}
		return d.syntaxError("',' or ']' after list item")
	}
}

func (d *decoder) listItem() error {
	d.skipSpace()
	switch d.peek() {
	case '{':
		obj, err := d.object(root)
		if err != nil {
			return err
		}
		d.hold(obj)
		return nil
	case 'n':
		if _, err := d.literal(); err != nil {
			return err
		}
		d.hold(map[string]any{})
		return nil
	}
	return ErrUnusual
}

// hold appends a decoded item to the list's items, unless Options.Keep refuses it.
func (d *decoder) hold(obj map[string]any) {
	if d.keep == nil || d.keep(obj) {
		d.items = append(d.items, obj)
	}
}
