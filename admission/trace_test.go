package admission

import (
	"errors"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/scripting"
)

func TestObjectKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		req  scripting.AdmissionRequest
		want string
	}{
		{"named", scripting.AdmissionRequest{Namespace: "web", Name: "api"}, "web/api"},
		{"cluster-scoped", scripting.AdmissionRequest{Name: "n1"}, "n1"},
		{"name only in the object", scripting.AdmissionRequest{Namespace: "web", Object: scripting.Object{"metadata": map[string]any{"name": "x"}}}, "web/x"},
		{"generateName", scripting.AdmissionRequest{Namespace: "web", Object: scripting.Object{"metadata": map[string]any{"generateName": "job-"}}}, "web/job-*"},
	} {
		if got := ObjectKey(tc.req); got != tc.want {
			t.Errorf("%s: ObjectKey = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestObservationTraceRecord: a decision becomes an admission record with who asked, the
// outcome and the answer, its long fields cut to AdmissionPatchChars.
func TestObservationTraceRecord(t *testing.T) {
	t.Parallel()
	dry := true
	req := &admissionv1.AdmissionRequest{Operation: admissionv1.Create, DryRun: &dry, UserInfo: authenticationv1.UserInfo{Username: "alice"},
		Resource: metav1.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}}
	at := time.Unix(100, 0)
	long := strings.Repeat("é", inspection.AdmissionPatchChars)
	o := Observation{Script: "p.js", Kind: "validate", Request: req, Received: at, Object: "web/api",
		Decision: Decision{Code: 500, Message: long, Outcome: OutcomeErrored, Err: errors.New("boom"), Warnings: []string{"w"}, Took: 1500 * time.Microsecond}}
	r := o.TraceRecord()
	a := r.Admission
	if r.Event != "admission" || r.Handler != "validate" || r.Result != "errored" || r.Resource != "apps/v1/deployments" ||
		r.Object != "web/api" || !r.Time.Equal(at) || r.DurationMs != 1.5 || r.Error != "boom" {
		t.Errorf("record %+v", r)
	}
	if a.User != "alice" || !a.DryRun || a.Operation != "CREATE" || a.Allowed || a.Code != 500 || len(a.Warnings) != 1 {
		t.Errorf("decision %+v", *a)
	}
	if len(a.Message) > inspection.AdmissionPatchChars+len("…") || !strings.HasSuffix(a.Message, "…") || !strings.HasPrefix(a.Message, "é") {
		t.Errorf("message of %d bytes not cut to %d", len(a.Message), inspection.AdmissionPatchChars)
	}
}
