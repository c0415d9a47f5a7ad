package offline_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/jsinformer/jsinformer/admission"
	"github.com/jsinformer/jsinformer/internal/memcluster"
	"github.com/jsinformer/jsinformer/offline"
)

// Admission offline: Admit and the in-memory cluster's writes run the loaded scripts'
// validate and mutate as kube-apiserver would call their webhooks.

const teamPolicy = `export default {
  watch: { resource: "v1/configmaps" },
  validate(obj, ctx) {
    if (obj.metadata.name === "boom") throw new Error("boom");
    if (!(obj.metadata.labels || {}).team) return { allowed: false, message: "a team label is required" };
    if (obj.metadata.labels.team === "old") return { allowed: true, warnings: ["team old is deprecated"] };
  },
  mutate(obj, ctx) {
    if (obj.data && obj.data.owner) return;
    const out = util.clone(obj);
    out.data = { ...out.data, owner: ctx.userInfo.username };
    return out;
  },
};`

func teamCM(ns, name string, labels map[string]any) map[string]any {
	meta := map[string]any{"name": name, "namespace": ns}
	if labels != nil {
		meta["labels"] = labels
	}
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": map[string]any{"k": "v"}}
}

func TestAdmitDecidesAsTheWebhooks(t *testing.T) {
	t.Parallel()
	r := startOffline(t, teamPolicy)
	webhook := admission.WebhookName("script.js", "validate")
	tests := []struct {
		name     string
		req      offline.AdmissionRequest
		calls    []string // "webhook outcome"
		denied   string   // the client's error message; "" when admitted
		code     int32
		warnings []string
		owner    any // data.owner after mutation
	}{
		{name: "unlabelled create is denied after the mutation",
			req:   offline.AdmissionRequest{Operation: "CREATE", Object: teamCM("default", "a", nil)},
			calls: []string{"mutate allowed", "validate denied"}, code: 403,
			denied: `admission webhook "` + webhook + `" denied the request: a team label is required`},
		{name: "labelled create is mutated and warned",
			req:   offline.AdmissionRequest{Operation: "CREATE", Object: teamCM("default", "a", map[string]any{"team": "old"})},
			calls: []string{"mutate allowed", "validate warned"}, warnings: []string{"team old is deprecated"}, owner: "runner-test"},
		{name: "the user is the request's",
			req: offline.AdmissionRequest{Operation: "CREATE", Object: teamCM("default", "a", map[string]any{"team": "a"}),
				UserInfo: offline.DefaultUser, Script: "script.js"},
			calls: []string{"mutate allowed", "validate allowed"}, owner: "runner-test"},
		{name: "a throwing validate answers by failurePolicy Fail",
			req:   offline.AdmissionRequest{Operation: "CREATE", Object: teamCM("default", "boom", map[string]any{"team": "a"})},
			calls: []string{"mutate allowed", "validate errored"}, code: 500,
			denied: `admission webhook "` + webhook + `" denied the request: script.js validate failed: script.js:4:`},
		{name: "DELETE is not among the default operations",
			req: offline.AdmissionRequest{Operation: "DELETE", OldObject: teamCM("default", "a", nil)}},
		{name: "kube-system is never sent to a script",
			req: offline.AdmissionRequest{Operation: "CREATE", Object: teamCM("kube-system", "a", nil)}, owner: nil},
		{name: "kube-node-lease is never sent to a script",
			req: offline.AdmissionRequest{Operation: "CREATE", Object: teamCM("kube-node-lease", "a", nil)}, owner: nil},
		{name: "a subresource is not the watched resource",
			req: offline.AdmissionRequest{Operation: "UPDATE", SubResource: "status", Object: teamCM("default", "a", nil)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := tt.req
			req.Resource, req.Namespace, req.Name = configmapsGVR, "default", "a"
			if obj := req.Object; obj != nil {
				u := unstructured.Unstructured{Object: obj}
				req.Namespace, req.Name = u.GetNamespace(), u.GetName()
			}
			res, err := r.Admit(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			var calls []string
			for _, c := range res.Calls {
				calls = append(calls, c.Webhook+" "+c.Decision.Outcome)
			}
			if strings.Join(calls, ",") != strings.Join(tt.calls, ",") {
				t.Errorf("calls %q, want %q", calls, tt.calls)
			}
			var st apierrors.APIStatus
			switch {
			case tt.denied == "" && res.Err != nil:
				t.Errorf("denied: %v", res.Err)
			case tt.denied != "" && (!errors.As(res.Err, &st) || st.Status().Code != tt.code || !strings.HasPrefix(st.Status().Message, tt.denied)):
				t.Errorf("error %v, want a %d starting %q", res.Err, tt.code, tt.denied)
			}
			if strings.Join(res.Warnings, ",") != strings.Join(tt.warnings, ",") {
				t.Errorf("warnings %q, want %q", res.Warnings, tt.warnings)
			}
			if tt.owner != nil && unstructuredOf(res.Object).Object["data"].(map[string]any)["owner"] != tt.owner {
				t.Errorf("object after mutation %v, want data.owner %v", res.Object, tt.owner)
			}
		})
	}
	if _, err := r.Admit(t.Context(), offline.AdmissionRequest{Operation: "CREATE", Object: teamCM("default", "a", nil), Script: "other.js"}); err == nil {
		t.Error("Admit for a script that is not loaded: no error")
	}
}

// TestAdmitCoversTheSubresourcesListed: a script's admission.subresources are sent to it,
// with ctx.subResource; the others are not.
func TestAdmitCoversTheSubresourcesListed(t *testing.T) {
	t.Parallel()
	r := startOffline(t, `export default {
  watch: { resource: "v1/configmaps" },
  validate(obj, ctx) { return { allowed: false, message: "seen " + ctx.subResource }; },
  admission: { subresources: ["status"] },
};`)
	admit := func(sub string) offline.AdmissionResult {
		res, err := r.Admit(t.Context(), offline.AdmissionRequest{Operation: "UPDATE", SubResource: sub, Resource: configmapsGVR,
			Namespace: "default", Name: "a", Object: teamCM("default", "a", nil), OldObject: teamCM("default", "a", nil)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := admit("status"); res.Err == nil || !strings.Contains(res.Err.Error(), "seen status") {
		t.Errorf("a status UPDATE: %v, want sent to the script", res.Err)
	}
	if res := admit("scale"); res.Err != nil || len(res.Calls) != 0 {
		t.Errorf("a scale UPDATE: %v, %d calls; want none", res.Err, len(res.Calls))
	}
}

// TestClusterWritesGoThroughAdmission: the harness's and the plugin's writes are mutated and
// denied by the loaded scripts, and the plugin sees what the mutation stored.
func TestClusterWritesGoThroughAdmission(t *testing.T) {
	t.Parallel()
	r := startOffline(t, teamPolicy)
	// A second plugin writes a ConfigMap without a team label on every Deployment: denied.
	writer := `export default {
  watch: { resource: "apps/v1/deployments" },
  async onAdd(obj) {
    await k8s.create("v1/configmaps", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: obj.metadata.name, namespace: "default" } });
  },
};`
	if err := r.Load(t.Context(), "writer.js", []byte(writer)); err != nil {
		t.Fatal(err)
	}
	_, err := r.cluster.Create(configmapsGVR, "default", unstructuredOf(teamCM("default", "plain", nil)), memcluster.WriteOptions{})
	if !apierrors.IsForbidden(err) || !strings.HasSuffix(err.Error(), "denied the request: a team label is required") {
		t.Errorf("an unlabelled create: %v, want the policy's denial", err)
	}
	stored, err := r.cluster.Create(configmapsGVR, "default", unstructuredOf(teamCM("default", "labelled", map[string]any{"team": "a"})), memcluster.WriteOptions{})
	if err != nil || stored.Object["data"].(map[string]any)["owner"] != "runner-test" {
		t.Fatalf("a labelled create: %v, %v; want stored with the mutation's owner", stored, err)
	}
	if _, err := r.cluster.Create(deploymentsGVR, "default", unstructuredOf(deployment("default", "web", "nginx", 1)), memcluster.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Settle(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var denied bool
	for _, w := range r.writes {
		denied = denied || (w.Verb == "create" && w.Name == "web" && apierrors.IsForbidden(w.Err))
	}
	if !denied {
		for _, rec := range r.log.find(func(record) bool { return true }) {
			t.Log(rec.msg, rec.attrs)
		}
		t.Errorf("the plugin's create of an unlabelled ConfigMap was not denied: %+v", r.writes)
	}
}

// TestAdmissionMayReadTheCluster: a validate that lists through k8s while the cluster is in the
// middle of the write it decides on answers (the write order is held, not the store's lock).
func TestAdmissionMayReadTheCluster(t *testing.T) {
	t.Parallel()
	r := startOffline(t, `export default {
  watch: { resource: "v1/configmaps" },
  validate(obj) {
    const n = k8s.list("v1/configmaps", { namespace: obj.metadata.namespace }).length;
    if (n >= 2) return { allowed: false, message: "at most 2 configmaps, there are " + n };
  },
};`)
	for i, name := range []string{"a", "b", "c"} {
		_, err := r.cluster.Create(configmapsGVR, "default", unstructuredOf(teamCM("default", name, nil)), memcluster.WriteOptions{})
		if denied := i == 2; denied != (err != nil) || (denied && !strings.HasSuffix(err.Error(), "at most 2 configmaps, there are 2")) {
			t.Errorf("create %s: %v", name, err)
		}
	}
}

// TestAdmitFansOutAsTheSharedEntries: scripts whose webhook entries would be alike are one
// entry, as the runner registers them: two mutates chained (the second sees the first's
// label), then two validates merged, and the denial names the shared entry and its script.
func TestAdmitFansOutAsTheSharedEntries(t *testing.T) {
	t.Parallel()
	const watch = `watch: { resource: "v1/configmaps" },`
	r := startOffline(t, `export default { `+watch+` mutate(obj) {
  const out = util.clone(obj); out.metadata.labels = { ...out.metadata.labels, first: "1" }; return out; } };`)
	for name, src := range map[string]string{
		"second.js": `mutate(obj) { const out = util.clone(obj); out.metadata.labels = { ...out.metadata.labels, second: "saw-" + obj.metadata.labels.first }; return out; }`,
		"v-a.js":    `validate() { return { allowed: true, warnings: ["from a"] }; }`,
		"v-b.js":    `validate(obj) { if (obj.metadata.labels.deny) return { allowed: false, message: "b says no" }; return { allowed: true, warnings: ["from b"] }; }`,
	} {
		if err := r.Load(t.Context(), name, []byte("export default { "+watch+" "+src+" };")); err != nil {
			t.Fatal(err)
		}
	}
	req := offline.AdmissionRequest{Operation: "CREATE", Resource: configmapsGVR, Namespace: "default", Name: "a", Object: teamCM("default", "a", nil)}
	res, err := r.Admit(t.Context(), req)
	if err != nil || res.Err != nil {
		t.Fatal(err, res.Err)
	}
	var calls []string
	for _, c := range res.Calls {
		calls = append(calls, c.Script+" "+c.Webhook)
	}
	if want := []string{"script.js mutate", "second.js mutate", "v-a.js validate", "v-b.js validate"}; !slices.Equal(calls, want) {
		t.Errorf("calls %q, want %q", calls, want)
	}
	labels := unstructuredOf(res.Object).GetLabels()
	if labels["first"] != "1" || labels["second"] != "saw-1" || !slices.Equal(res.Warnings, []string{"from a", "from b"}) {
		t.Errorf("labels %v, warnings %q: want both mutations chained and both validations' warnings", labels, res.Warnings)
	}
	req.Object = teamCM("default", "a", map[string]any{"deny": "yes"})
	res, _ = r.Admit(t.Context(), req)
	entry := admission.Group{Kind: "validate", Scripts: []string{"v-a.js", "v-b.js"}}.Name()
	if res.Err == nil || res.Err.Error() != `admission webhook "`+entry+`" denied the request: v-b.js: b says no` {
		t.Errorf("denial %v, want the shared entry's with v-b.js's message", res.Err)
	}
}
