package scripting

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestAdmissionSubresourcesAndLockoutOptions(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "v.js", `export default { validate(obj) {}, admission: { subresources: ["scale", "status"], allowClusterLockout: true } }`, Options{})
	if a := s.Definition().Admission; !slices.Equal(a.Subresources, []string{"scale", "status"}) || !a.AllowClusterLockout {
		t.Errorf("admission = %+v", a)
	}
	s = newTestScript(t, "d.js", `export default { validate(obj) {} }`, Options{})
	if a := s.Definition().Admission; a.Subresources != nil || a.AllowClusterLockout {
		t.Errorf("defaults = %+v, want the main resource only and no lockout allowed", a)
	}
	for _, tc := range []struct{ name, admission, want string }{
		{"not a list", "subresources: 'scale'", `v.js:2: 'admission.subresources' must be a list such as ["scale"]`},
		{"a path", "subresources: ['deployments/scale']", `'admission.subresources' has a string ("deployments/scale"); a subresource is a lowercase name`},
		{"twice", "subresources: ['scale', 'scale']", `'admission.subresources' lists "scale" twice`},
		{"star with others", "subresources: ['*', 'scale']", `lists "*" with other subresources`},
		{"lockout not a boolean", "allowClusterLockout: 'yes'", "'admission.allowClusterLockout' must be true or false"},
		{"lockout with Ignore", "failurePolicy: 'Ignore', allowClusterLockout: true", `'admission.allowClusterLockout' applies to failurePolicy "Fail" only`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := instantiate("v.js", "export default { validate() {}, admission: {\n  "+tc.admission+" } }", Options{})
			if err == nil || !errors.Is(err, ErrInvalidDefinition) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v\nwant one containing %q", err, tc.want)
			}
		})
	}
}

func TestCheckLockout(t *testing.T) {
	t.Parallel()
	fail := AdmissionSpec{FailurePolicy: FailurePolicyFail}
	for _, tc := range []struct {
		spec                AdmissionSpec
		group, resource     string
		namespaced, refused bool
	}{
		{fail, "", "nodes", false, true},
		{fail, "apiextensions.k8s.io", "customresourcedefinitions", false, true},
		{fail, "coordination.k8s.io", "leases", true, true},
		{fail, "", "configmaps", true, false},
		{fail, "example.com", "leases", true, false}, // another group's leases are just a resource
		{AdmissionSpec{FailurePolicy: FailurePolicyIgnore}, "", "nodes", false, false},
		{AdmissionSpec{FailurePolicy: FailurePolicyFail, AllowClusterLockout: true}, "", "nodes", false, false},
	} {
		err := tc.spec.CheckLockout("p.js", tc.resource, tc.group, tc.resource, tc.namespaced)
		if (err != nil) != tc.refused || (err != nil && (!errors.Is(err, ErrInvalidDefinition) || !strings.HasPrefix(err.Error(), "p.js: admission on"))) {
			t.Errorf("%+v on %s/%s: %v, want refused %t", tc.spec, tc.group, tc.resource, err, tc.refused)
		}
	}
}
