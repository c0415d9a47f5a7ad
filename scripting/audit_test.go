package scripting

import (
	"errors"
	"strings"
	"testing"
)

func TestAuditOptionDefaultsOffAndIsRead(t *testing.T) {
	t.Parallel()
	if def := newTestScript(t, "v.js", `export default { validate(obj) {} }`, Options{}).Definition(); def.Admission.Audit {
		t.Error("audit is on without admission.audit")
	}
	src := `export default { validate(obj) {}, admission: { audit: true, mode: "warn" } }`
	if def := newTestScript(t, "a.js", src, Options{}).Definition(); !def.Admission.Audit || def.Admission.Mode != ModeWarn {
		t.Errorf("admission = %+v, want audit on in warn mode", def.Admission)
	}
}

func TestAuditOptionErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, src, want string }{
		{"not a boolean", "export default { validate() {}, admission: {\n  audit: 'yes' } }", "v.js:2: 'admission.audit' must be true or false, got a string"},
		{"without validate", "export default { mutate() {}, admission: {\n  audit: true } }", "v.js:2: 'admission.audit' audits objects with validate, but the definition has no validate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := instantiate("v.js", tc.src, Options{})
			if err == nil || !errors.Is(err, ErrInvalidDefinition) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v\nwant one containing %q", err, tc.want)
			}
		})
	}
}

// TestAuditOperationReachesCtx: an audit call shows ctx.operation "AUDIT" and no request.
func TestAuditOperationReachesCtx(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "v.js", `export default { validate(obj, ctx) {
  return { allowed: false, message: ctx.operation + " " + (ctx.userInfo === null) + " " + (ctx.oldObject === null) } } }`, Options{})
	res, err := s.Validate(AdmissionRequest{Operation: OperationAudit, Object: Object{"metadata": map[string]any{"name": "a"}}})
	if err != nil || res.Allowed || res.Message != "AUDIT true true" {
		t.Errorf("validate = %+v, %v; want a denial saying \"AUDIT true true\"", res, err)
	}
}
