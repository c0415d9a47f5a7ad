package scripting

import (
	"strings"
	"testing"
)

// TestAdmissionDeleteHint: a policy that reads obj.metadata throws a TypeError on DELETE,
// where obj is null; the error names the operation and the fix, at the script's line. Other
// errors, and the same TypeError on CREATE, are left as they are.
func TestAdmissionDeleteHint(t *testing.T) {
	t.Parallel()
	src := `export default {
  admission: { operations: ["CREATE", "DELETE"] },
  validate(obj, ctx) {
    if (ctx.name === "not-a-function") ctx.nope();
    if (ctx.name === "other-null") return ctx.oldObject.labels.team;
    return obj.metadata.labels?.team ? undefined : { allowed: false };
  },
  mutate(obj) { const { metadata } = obj; return metadata.name === "x" ? undefined : undefined; },
};`
	s := newTestScript(t, "p.js", src, Options{})
	t.Cleanup(s.Close)
	del := AdmissionRequest{Operation: "DELETE", OldObject: sample(), Name: "web"}
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"validate on DELETE", func() error { _, err := s.Validate(del); return err }, "p.js:6:"},
		{"mutate on DELETE", func() error { _, err := s.Mutate(del); return err }, "p.js:8:"},
	} {
		err := tc.call()
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !strings.Contains(err.Error(), "TypeError") ||
			!strings.HasSuffix(err.Error(), "(obj is null on DELETE; use ctx.oldObject)") {
			t.Errorf("%s: %v, want a TypeError at %s ending with the hint", tc.name, err, tc.want)
		}
	}
	notAFunction := del
	notAFunction.Name = "not-a-function"
	if _, err := s.Validate(notAFunction); err == nil || strings.Contains(err.Error(), "obj is null") {
		t.Errorf("a TypeError not about null: %v, want no hint", err)
	}
	create := AdmissionRequest{Operation: "CREATE", Object: sample(), Name: "other-null"}
	if _, err := s.Validate(create); err == nil || strings.Contains(err.Error(), "obj is null") {
		t.Errorf("a TypeError about null on CREATE: %v, want no hint", err)
	}
}
