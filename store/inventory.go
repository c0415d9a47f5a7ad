package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// The store as a whole, read straight from its ConfigMaps without a Store: what `runner
// store` shows and changes. Every function takes the client of whoever asks (its kubeconfig),
// so it may do what that user's RBAC allows and nothing more.

// Owner is one script's or one shared namespace's store as its ConfigMaps show it.
type Owner struct {
	ID         string    `json:"id"`   // the LabelScript value
	Name       string    `json:"name"` // the script's name, or the shared namespace's
	Shared     bool      `json:"shared"`
	ConfigMaps int       `json:"configMaps"`
	Keys       int       `json:"keys"`      // live keys
	Bytes      int       `json:"bytes"`     // key plus value bytes of the live keys
	LastWrite  time.Time `json:"lastWrite"` // zero: no write recorded
	// DeletedAt is when the runner found the script gone (retention.go); zero while it exists.
	DeletedAt time.Time `json:"deletedAt"`
}

// Inventory lists the stores in namespace, sorted by name (scripts first, then shared).
func Inventory(ctx context.Context, client corev1client.ConfigMapsGetter, namespace string, now time.Time) ([]Owner, error) {
	cms, err := listAll(ctx, client, namespace, "")
	if err != nil {
		return nil, err
	}
	byID := map[string]*Owner{}
	for i := range cms {
		cm := &cms[i]
		o := byID[cm.Labels[LabelScript]]
		if o == nil {
			o = ownerOf(cm)
			byID[o.ID] = o
		}
		doc, err := decodeDocument(cm)
		if err != nil {
			return nil, err
		}
		u := doc.usage(now)
		o.ConfigMaps++
		o.Keys += u.keys
		o.Bytes += u.bytes
		if doc.At != 0 && time.UnixMilli(doc.At).After(o.LastWrite) {
			o.LastWrite = time.UnixMilli(doc.At)
		}
		if at, ok := deletedAt(cm); ok && (o.DeletedAt.IsZero() || at.Before(o.DeletedAt)) {
			o.DeletedAt = at
		}
	}
	out := make([]Owner, 0, len(byID))
	for _, o := range byID {
		out = append(out, *o)
	}
	slices.SortFunc(out, func(a, b Owner) int {
		if a.Shared != b.Shared {
			if a.Shared {
				return 1
			}
			return -1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

func ownerOf(cm *corev1.ConfigMap) *Owner {
	o := &Owner{ID: cm.Labels[LabelScript], Name: cm.Annotations[AnnotationScript]}
	if name, ok := cm.Annotations[AnnotationShared]; ok {
		o.Name, o.Shared = name, true
	}
	if o.Name == "" {
		o.Name = "(unnamed " + o.ID + ")"
	}
	return o
}

// Entries returns the live entries of the store whose ID is id, sorted by key; values are
// included whether readable or not (the caller decides what to show).
func Entries(ctx context.Context, client corev1client.ConfigMapsGetter, namespace, id string, now time.Time) ([]Entry, error) {
	cms, err := listAll(ctx, client, namespace, id)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for i := range cms {
		doc, err := decodeDocument(&cms[i])
		if err != nil {
			return nil, err
		}
		for k, e := range doc.Entries {
			if !e.expired(now) {
				out = append(out, toEntry(k, e))
			}
		}
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// DeleteAll deletes every ConfigMap of the store whose ID is id and returns how many.
func DeleteAll(ctx context.Context, client corev1client.ConfigMapsGetter, namespace, id string) (int, error) {
	cms, err := listAll(ctx, client, namespace, id)
	if err != nil {
		return 0, err
	}
	n := 0
	for i := range cms {
		err := client.ConfigMaps(namespace).Delete(ctx, cms[i].Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return n, fmt.Errorf("delete store configmap %s: %w", cms[i].Name, err)
		}
		n++
	}
	return n, nil
}

// DeleteKey removes key from the store whose ID is id, wherever it is (so without knowing the
// runner's --store-shards), as a runner's write does: the shard's sequence grows and the update
// carries the resourceVersion read, retried when another writer came between. It reports
// whether the key existed.
func DeleteKey(ctx context.Context, client corev1client.ConfigMapsGetter, namespace, id, key string) (bool, error) {
	for range maxAttempts {
		cms, err := listAll(ctx, client, namespace, id)
		if err != nil {
			return false, err
		}
		cm, doc, err := holding(cms, key)
		if err != nil || cm == nil {
			return false, err
		}
		delete(doc.Entries, key)
		doc.Seq++
		doc.At = time.Now().UnixMilli()
		data, err := encodeDocument(cm.Name, doc)
		if err != nil {
			return false, err
		}
		cm.Data[DataKey] = data
		_, err = client.ConfigMaps(namespace).Update(ctx, cm, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("update store configmap %s: %w", cm.Name, err)
		}
		return true, nil
	}
	return false, fmt.Errorf("delete store key %q: lost to other writers %d times", key, maxAttempts)
}

// holding finds the ConfigMap among cms whose document holds key; nil when none does.
func holding(cms []corev1.ConfigMap, key string) (*corev1.ConfigMap, *document, error) {
	for i := range cms {
		doc, err := decodeDocument(&cms[i])
		if err != nil {
			return nil, nil, err
		}
		if _, ok := doc.Entries[key]; ok {
			return &cms[i], doc, nil
		}
	}
	return nil, nil, nil
}

// listAll lists the store's ConfigMaps in namespace: those of id, or all when id is "".
func listAll(ctx context.Context, client corev1client.ConfigMapsGetter, namespace, id string) ([]corev1.ConfigMap, error) {
	sel := LabelScript
	if id != "" {
		sel += "=" + id
	}
	list, err := client.ConfigMaps(namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list store configmaps in %s: %w", namespace, err)
	}
	return list.Items, nil
}
