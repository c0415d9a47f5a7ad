package admission

import (
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kvalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/jsinformer/jsinformer/dynamicinformer"
)

// The values of a review that become metric labels and decision records (metrics.go,
// trace.go) are checked before any script runs: without client authentication
// (--webhook-client-ca) anyone who reaches the port can post a review, and a made-up
// operation or resource would otherwise become a metric series, or a decision record that
// runner explain and tail show as genuine. A review failing a check is refused with 400 and
// leaves no trace.

// operations are the AdmissionReview schema's operations.
var operations = map[admissionv1.Operation]bool{
	admissionv1.Create: true, admissionv1.Update: true, admissionv1.Delete: true, admissionv1.Connect: true,
}

// Covering is a Script that tells which requests its webhook entry was registered for
// (engine.AdmissionScript is one): a request for another resource or subresource is not sent
// to it. A Script that is not one is sent every request whose values pass checkReview.
type Covering interface {
	Covers(resource schema.GroupVersionResource, subResource string) bool
}

// checkReview refuses a request whose operation is not one of the schema's, or whose
// resource, subresource, namespace or name is not a well-formed Kubernetes name.
func checkReview(req *admissionv1.AdmissionRequest) error {
	if !operations[req.Operation] {
		return refuse(http.StatusBadRequest, "operation %.64q is none of CREATE, UPDATE, DELETE, CONNECT", req.Operation)
	}
	r := req.Resource
	for _, f := range []struct {
		field, value string
		ok           func(string) []string
		optional     bool
	}{
		{"resource.group", r.Group, kvalidation.IsDNS1123Subdomain, true},
		{"resource.version", r.Version, kvalidation.IsDNS1123Label, false},
		{"resource.resource", r.Resource, kvalidation.IsDNS1123Subdomain, false},
		{"subResource", req.SubResource, kvalidation.IsDNS1123Subdomain, true},
		{"namespace", req.Namespace, kvalidation.IsDNS1123Label, true},
		{"name", req.Name, isObjectName, true},
	} {
		if f.value == "" && f.optional {
			continue
		}
		if errs := f.ok(f.value); len(errs) > 0 {
			return refuse(http.StatusBadRequest, "request %s %.64q: %s", f.field, f.value, strings.Join(errs, "; "))
		}
	}
	return nil
}

// isObjectName accepts what the API server accepts as any object's name: a path segment of
// at most 253 bytes.
func isObjectName(name string) []string {
	if len(name) > kvalidation.DNS1123SubdomainMaxLength {
		return []string{kvalidation.MaxLenError(kvalidation.DNS1123SubdomainMaxLength)}
	}
	for _, bad := range []string{"/", "%"} {
		if strings.Contains(name, bad) {
			return []string{"may not contain " + bad}
		}
	}
	if name == "." || name == ".." {
		return []string{"may not be . or .."}
	}
	return nil
}

// covering are the scripts that cover req's resource and subresource; a 400 when none does,
// since the API server sends no such request to their entry.
func covering(scripts []Script, req *admissionv1.AdmissionRequest) ([]Script, error) {
	gvr := schema.GroupVersionResource(req.Resource)
	out := scripts[:0:0]
	loaded := 0
	for _, s := range scripts {
		if _, stand := s.(notLoaded); stand {
			out = append(out, s)
			continue
		}
		if c, ok := s.(Covering); !ok || c.Covers(gvr, req.SubResource) {
			out = append(out, s)
			loaded++
		}
	}
	// Stand-ins for scripts not loaded answer only beside a loaded script that covers the
	// request: a path's names alone never make a caller's review reach a decision.
	if loaded == 0 {
		sub := ""
		if req.SubResource != "" {
			sub = "/" + req.SubResource
		}
		return nil, refuse(http.StatusBadRequest, "no script of this path is registered for %s%s", dynamicinformer.FormatGVR(gvr), sub)
	}
	return out, nil
}
