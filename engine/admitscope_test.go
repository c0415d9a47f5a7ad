package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/status"
)

// TestAdmissionThatCouldLockTheClusterOutDoesNotLoad: failurePolicy Fail, given or by
// default, on a resource whose scope the load resolves as cluster-scoped (nodes, namespaces,
// CRDs, webhook configurations) or on Leases fails that script's load with why and what to
// write; Ignore, or Fail with allowClusterLockout, loads, as a namespaced resource does. A
// script's admission.subresources reaches its admission entry.
func TestAdmissionThatCouldLockTheClusterOutDoesNotLoad(t *testing.T) {
	t.Parallel()
	admit := func(watch, admission string) string {
		return `export default { watch: "` + watch + `", validate(obj) {}` + admission + ` };`
	}
	refused := map[string]string{
		"nodes.js":    admit("nodes", ""),
		"ns.js":       admit("v1/namespaces", `, admission: { failurePolicy: "Fail" }`),
		"crds.js":     admit("customresourcedefinitions", ""),
		"webhooks.js": admit("validatingwebhookconfigurations", `, admission: { operations: ["*"] }`),
		"leases.js":   admit("coordination.k8s.io/v1/leases", ""),
	}
	loaded := map[string]string{
		"nodes-ignore.js": admit("nodes", `, admission: { failurePolicy: "Ignore" }`),
		"nodes-optin.js":  admit("nodes", `, admission: { failurePolicy: "Fail", allowClusterLockout: true }`),
		"leases-optin.js": admit("leases", `, admission: { allowClusterLockout: true }`),
		"cm.js":           admit("configmaps", ""),
		"nodes-watch.js":  `export default { watch: "nodes", onAdd() {} };`, // no admission: nothing to refuse
		"scale.js":        admit("deployments", `, admission: { subresources: ["scale"] }`),
	}
	scripts := map[string]string{}
	for name, src := range refused {
		scripts[name] = src
	}
	for name, src := range loaded {
		scripts[name] = src
	}
	r := startEngine(t, scripts, nil)
	for name := range refused {
		l := waitLoad(t, r, name, status.LoadFailed, "")
		msg := ""
		if l.Error != nil {
			msg = l.Error.Message
		}
		want := "cluster-scoped"
		if name == "leases.js" {
			want = "Leases are the leader election"
		}
		if !strings.Contains(msg, `failurePolicy "Fail"`) || !strings.Contains(msg, want) || !strings.Contains(msg, "allowClusterLockout: true") ||
			!strings.Contains(msg, `failurePolicy: "Ignore"`) {
			t.Errorf("%s: load error %q, want why (%s) and what to write", name, msg, want)
		}
	}
	for name := range loaded {
		waitLoad(t, r, name, status.LoadLoaded, "")
	}
	i := slices.IndexFunc(r.engine.AdmissionEntries(), func(e engine.AdmissionEntry) bool { return e.Script == "scale.js" })
	if i < 0 || !slices.Equal(r.engine.AdmissionEntries()[i].Spec.Subresources, []string{"scale"}) {
		t.Errorf("scale.js's admission entry: %+v", r.engine.AdmissionEntries())
	}
}
