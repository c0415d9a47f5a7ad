package permissions_test

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/jsinformer/jsinformer/permissions"
)

func TestIsRefusal(t *testing.T) {
	t.Parallel()
	rbac := apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "x", errors.New(`User "u" cannot patch resource "secrets"`))
	terminating := apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "x",
		errors.New("unable to create new content in namespace doomed because it is being terminated"))
	terminating.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: "NamespaceTerminating", Field: "metadata.namespace"}}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"RBAC", rbac, true},
		{"RBAC, wrapped", fmt.Errorf("patch v1/secrets: %w", rbac), true},
		{"namespace being terminated", terminating, false},
		{"namespace being terminated, wrapped", fmt.Errorf("create v1/secrets: %w", terminating), false},
		{"not found", apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, "x"), false},
		{"nil", nil, false},
	} {
		if got := permissions.IsRefusal(tc.err); got != tc.want {
			t.Errorf("%s: IsRefusal = %v, want %v", tc.name, got, tc.want)
		}
	}
}
