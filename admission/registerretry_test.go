package admission

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestRefusedEntriesAreLeftOutAlone: when the API server refuses entries of a configuration
// (a 422 naming webhooks[i]), the others are written without them.
func TestRefusedEntriesAreLeftOutAlone(t *testing.T) {
	t.Parallel()
	gk := schema.GroupKind{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}
	var writes [][]string
	apply := func(hooks []string) error {
		writes = append(writes, slices.Clone(hooks))
		var errs field.ErrorList
		for i, h := range hooks {
			if h == "bad-1" || h == "bad-2" {
				errs = append(errs, field.Invalid(field.NewPath("webhooks").Index(i).Child("name"), h, "refused"))
			}
		}
		if len(errs) > 0 { // wrapped, as applyValidating returns it
			return fmt.Errorf("reconcile: %w", apierrors.NewInvalid(gk, "x", errs))
		}
		return nil
	}
	refused := map[string]string{}
	err := withoutRefused([]string{"a", "bad-1", "b", "bad-2", "c"}, func(h string) string { return h }, refused, apply)
	if err != nil || !slices.Equal(writes[len(writes)-1], []string{"a", "b", "c"}) {
		t.Fatalf("writes %q, %v; want the last without the refused entries", writes, err)
	}
	if len(refused) != 2 || refused["bad-1"] == "" || refused["bad-2"] == "" {
		t.Errorf("refused = %q", refused)
	}
	other := apierrors.NewConflict(schema.GroupResource{}, "x", nil)
	calls := 0
	err = withoutRefused([]string{"a"}, func(h string) string { return h }, refused, func([]string) error { calls++; return other })
	if !errors.Is(err, other) || calls != 1 {
		t.Errorf("another error: %v after %d writes, want it returned after one", err, calls)
	}
}
