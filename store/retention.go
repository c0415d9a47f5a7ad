package store

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Retention: the store of a script that is gone is kept for a while, then deleted. Sweep
// marks the ConfigMaps of every store no live script owns with AnnotationDeletedAt (the time
// it first found them unowned), removes the mark again from those owned once more (the
// script came back: its data is as it was), and deletes those marked longer ago than the
// retention. The mark is on the API server, so the time counts across restarts and replicas.
// Each change carries the resourceVersion read: a ConfigMap written between the list and the
// change is left for the next sweep, so a delete never removes a write it did not see.

// AnnotationDeletedAt holds, in RFC 3339, when a sweep found the store's owner gone.
const AnnotationDeletedAt = "jsinformer.io/store-deleted-at"

// SweepEvery is how often a runner sweeps with retention r: a quarter of it, between 100ms
// and ten minutes, so a store outlives its script by at most r plus that.
func SweepEvery(r time.Duration) time.Duration {
	return min(max(r/4, 100*time.Millisecond), 10*time.Minute)
}

// SweepResult counts what one Sweep did, in ConfigMaps.
type SweepResult struct {
	Marked, Unmarked, Deleted int
}

// Sweep applies the retention to every store ConfigMap in the Store's namespace: live reports
// whether the store whose ID (ScriptID, SharedID) it is given still has an owner. The caller
// must only sweep once it knows every script (after the scripts folder's first scan).
func (s *Store) Sweep(ctx context.Context, live func(id string) bool, retention time.Duration) (SweepResult, error) {
	var res SweepResult
	cms, err := listAll(ctx, s.client, s.opts.Namespace, "")
	if err != nil {
		return res, err
	}
	now := s.opts.Now()
	for i := range cms {
		cm := &cms[i]
		at, marked := deletedAt(cm)
		var err error
		switch {
		case live(cm.Labels[LabelScript]):
			if marked {
				err = s.setMark(ctx, cm, "")
				count(&res.Unmarked, err)
			}
		case !marked:
			err = s.setMark(ctx, cm, now.UTC().Format(time.RFC3339))
			count(&res.Marked, err)
		case now.Sub(at) >= retention:
			err = s.deleteStale(ctx, cm)
			count(&res.Deleted, err)
		}
		if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return res, err
		}
	}
	if res.Deleted > 0 {
		s.forget(live)
	}
	return res, nil
}

func count(n *int, err error) {
	if err == nil {
		*n++
	}
}

// setMark sets AnnotationDeletedAt to at, or removes it when at is "".
func (s *Store) setMark(ctx context.Context, cm *corev1.ConfigMap, at string) error {
	cm = cm.DeepCopy()
	if at == "" {
		delete(cm.Annotations, AnnotationDeletedAt)
	} else {
		if cm.Annotations == nil {
			cm.Annotations = map[string]string{}
		}
		cm.Annotations[AnnotationDeletedAt] = at
	}
	if _, err := s.client.ConfigMaps(s.opts.Namespace).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("mark store configmap %s: %w", cm.Name, err)
	}
	return nil
}

// deleteStale deletes cm unless it changed since it was listed.
func (s *Store) deleteStale(ctx context.Context, cm *corev1.ConfigMap) error {
	err := s.client.ConfigMaps(s.opts.Namespace).Delete(ctx, cm.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &cm.UID, ResourceVersion: &cm.ResourceVersion}})
	if err != nil {
		return fmt.Errorf("delete store configmap %s: %w", cm.Name, err)
	}
	s.log.Info("store data of a deleted script removed", "configmap", cm.Name, "script", ownerOf(cm).Name)
	return nil
}

// forget drops the Scopes of stores without owner, whose counts no longer hold.
func (s *Store) forget(live func(id string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, sc := range s.scopes {
		if !live(sc.id) {
			delete(s.scopes, k)
		}
	}
}

// deletedAt reads cm's AnnotationDeletedAt; false when absent or unreadable.
func deletedAt(cm *corev1.ConfigMap) (time.Time, bool) {
	v, ok := cm.Annotations[AnnotationDeletedAt]
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, v)
	return t, err == nil
}
