package k8sclient

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Secret values must never reach the runner's log. The API server echoes a rejected value in
// some error messages (a server-side apply of a wrong-typed field reads `.stringData.password:
// expected string, got ...{"v":"hunter2"}`), and an error a script does not catch is logged;
// so the message of an error about a Secret is replaced before the script sees it, keeping its
// HTTP code, reason and the names of the fields involved. Dry-run records of patches to Secrets
// show no patch (shownPatch).

var secretsGVR = corev1.SchemeGroupVersion.WithResource("secrets")

// safeReasons are the reasons whose messages only name objects, users and fields.
var safeReasons = map[metav1.StatusReason]bool{
	metav1.StatusReasonNotFound: true, metav1.StatusReasonAlreadyExists: true,
	metav1.StatusReasonConflict: true, metav1.StatusReasonForbidden: true,
	metav1.StatusReasonUnauthorized: true, metav1.StatusReasonGone: true,
	metav1.StatusReasonTimeout: true, metav1.StatusReasonServerTimeout: true,
	metav1.StatusReasonTooManyRequests: true, metav1.StatusReasonMethodNotAllowed: true,
}

// redact returns err with its server message hidden when it is about a Secret.
func (c *Client) redact(resource string, err error) error {
	if err == nil || !c.isSecret(resource) {
		return err
	}
	return redactStatus(err)
}

func (c *Client) isSecret(resource string) bool {
	res, err := c.resolver.Resolve(resource)
	return err == nil && res.GVR == secretsGVR
}

// redactStatus replaces the message of a Kubernetes status error whose reason may carry data.
// Errors without a status (transport, context) never carry the request body.
func redactStatus(err error) error {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return err
	}
	status := st.Status()
	if safeReasons[status.Reason] {
		return err
	}
	var fields []string
	if status.Details != nil {
		details := *status.Details
		details.Causes = make([]metav1.StatusCause, len(status.Details.Causes))
		for i, cause := range status.Details.Causes {
			details.Causes[i] = metav1.StatusCause{Type: cause.Type, Field: cause.Field}
			if cause.Field != "" {
				fields = append(fields, cause.Field)
			}
		}
		status.Details = &details
	}
	reason := ""
	if status.Reason != "" {
		reason = " " + string(status.Reason)
	}
	status.Message = fmt.Sprintf("rejected (HTTP %d%s); the server's message is not shown: "+
		"about a Secret, it may contain the Secret's data", status.Code, reason)
	if len(fields) > 0 {
		status.Message += " (fields " + strings.Join(fields, ", ") + ")"
	}
	return &apierrors.StatusError{ErrStatus: status}
}
