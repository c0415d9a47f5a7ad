package permissions

import (
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// IsRefusal reports whether err is the API server refusing a call for want of permission:
// 403 Forbidden, except a write into a namespace being deleted, which the API server also
// answers 403 (cause NamespaceTerminating, from its NamespaceLifecycle admission) and which
// no grant mends.
func IsRefusal(err error) bool {
	return apierrors.IsForbidden(err) && !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)
}
