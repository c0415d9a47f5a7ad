package k8sclient

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestRedactStatus(t *testing.T) {
	t.Parallel()
	secrets := schema.GroupResource{Resource: "secrets"}
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Secret"}, "db", field.ErrorList{
		field.Invalid(field.NewPath("data", "password"), "hunter2", "must be base64"),
	})
	tests := []struct {
		name     string
		err      error
		want     []string
		redacted bool
	}{
		{"invalid keeps code, reason and fields", invalid, []string{"HTTP 422 Invalid", "fields data.password"}, true},
		{"internal error", apierrors.NewInternalError(errors.New(`got {"v":"hunter2"}`)), []string{"HTTP 500 InternalError"}, true},
		{"bad request", apierrors.NewBadRequest("hunter2"), []string{"HTTP 400 BadRequest"}, true},
		{"not found is kept", apierrors.NewNotFound(secrets, "db"), []string{`secrets "db" not found`}, false},
		{"conflict is kept", apierrors.NewConflict(secrets, "db", errors.New("modified")), []string{"modified"}, false},
		{"no status is kept", context.DeadlineExceeded, []string{"deadline exceeded"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := redactStatus(tt.err)
			msg := got.Error()
			if strings.Contains(msg, "hunter2") {
				t.Errorf("message %q still holds the value", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			if redacted := msg != tt.err.Error(); redacted != tt.redacted {
				t.Errorf("redacted = %t, want %t", redacted, tt.redacted)
			}
			if apierrors.ReasonForError(got) != apierrors.ReasonForError(tt.err) {
				t.Errorf("reason %q, want %q", apierrors.ReasonForError(got), apierrors.ReasonForError(tt.err))
			}
		})
	}
}
