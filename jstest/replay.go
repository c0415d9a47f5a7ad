package jstest

import (
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/jsinformer/jsinformer/internal/memcluster"
	"github.com/jsinformer/jsinformer/recording"
)

// h.replay(file) feeds a recording of `runner record` to the plugin: the objects of its
// initial list that the cluster does not hold yet are created first, then each change is
// applied in order, after moving the virtual clock by the time that separated it from the
// event before, and runs until quiet, as h.add does. harness({objects: ["file.jsonl"]})
// seeds the initial list instead, so the plugin sees it at start-up.

func (h *harness) replay(path string) {
	full, err := locate(h.f.dir, path)
	if err != nil {
		h.f.throw(fmt.Errorf("h.replay: %w", err))
	}
	events, err := recording.ReadFile(full)
	h.check(err)
	var last time.Time
	for i, ev := range events {
		if !last.IsZero() && ev.Time.After(last) && !ev.Initial {
			by := ev.Time.Sub(last)
			h.check(h.pump(func() error { return h.off.Advance(h.f.ctx, by) }))
		}
		last = ev.Time
		if err := h.apply(ev); err != nil {
			h.f.throw(fmt.Errorf("h.replay: %s, event %d (%s %s): %w", path, i+1, ev.Type, ev.Resource, err))
		}
		h.quiesce()
	}
}

// apply makes the cluster hold what the event says: the object's state, or its absence.
func (h *harness) apply(ev recording.Event) error {
	obj := scrub(ev.Object)
	res, ns, err := h.place(obj)
	if err != nil {
		return err
	}
	stored, err := h.cluster.Get(res.GVR, ns, obj.GetName())
	switch {
	case apierrors.IsNotFound(err) && ev.Type == recording.Deleted:
		return nil
	case apierrors.IsNotFound(err):
		_, err = h.put(obj)
		return err
	case err != nil:
		return err
	case ev.Type == recording.Deleted:
		return h.remove(res, stored)
	case ev.Initial:
		return nil // already there
	}
	status := obj.Object["status"]
	updated, err := h.cluster.Update(res.GVR, ns, obj, memcluster.WriteOptions{FieldManager: harnessManager})
	if err != nil {
		return err
	}
	if _, err = h.setStatus(res, updated, status); err != nil {
		return err
	}
	if deleting(ev.Object) && stored.GetDeletionTimestamp() == nil {
		_, err = h.cluster.Delete(res.GVR, ns, obj.GetName(), memcluster.WriteOptions{}) // marks it, as it was
	}
	return err
}

// deleting reports a recorded object that was being deleted (it had finalizers left).
func deleting(obj map[string]any) bool {
	_, ok, _ := unstructured.NestedFieldNoCopy(obj, "metadata", "deletionTimestamp")
	return ok
}

// remove deletes an object for good: a recorded deletion happened, whatever finalizers
// the object had.
func (h *harness) remove(res memcluster.Resource, stored *unstructured.Unstructured) error {
	if len(stored.GetFinalizers()) > 0 {
		stored.SetFinalizers(nil)
		stored.SetResourceVersion("")
		if _, err := h.cluster.Update(res.GVR, stored.GetNamespace(), stored, memcluster.WriteOptions{FieldManager: harnessManager}); err != nil {
			return err
		}
	}
	_, err := h.cluster.Delete(res.GVR, stored.GetNamespace(), stored.GetName(), memcluster.WriteOptions{})
	if apierrors.IsNotFound(err) {
		return nil // removing the finalizers ended a deletion in progress
	}
	return err
}

// scrub keeps what a client may write of a recorded object: not the fields the recording
// server set (uid, resourceVersion, timestamps, generation, managedFields).
func scrub(obj map[string]any) *unstructured.Unstructured {
	u := (&unstructured.Unstructured{Object: obj}).DeepCopy()
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "deletionTimestamp",
		"deletionGracePeriodSeconds", "generation", "managedFields", "selfLink"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	return u
}

// recordedObjects are the initial list of a recording, for harness({objects}).
func recordedObjects(path string) ([]*unstructured.Unstructured, error) {
	events, err := recording.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, ev := range events {
		if ev.Initial {
			out = append(out, scrub(ev.Object))
		}
	}
	return out, nil
}
