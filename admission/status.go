package admission

import (
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type metav1Status = metav1.Status

var reviewType = metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"}

// reasonFor is the StatusReason the API server reports for a denial with code.
func reasonFor(code int32) metav1.StatusReason {
	switch code {
	case http.StatusForbidden:
		return metav1.StatusReasonForbidden
	case http.StatusUnprocessableEntity:
		return metav1.StatusReasonInvalid
	case http.StatusInternalServerError:
		return metav1.StatusReasonInternalError
	case http.StatusBadRequest:
		return metav1.StatusReasonBadRequest
	}
	return ""
}
