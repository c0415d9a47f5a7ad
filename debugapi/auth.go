package debugapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/kubernetes"
)

// Authorizer decides, for a listener that is not on loopback, whether a request may proceed;
// when not, it has written the answer (401 or 403).
type Authorizer interface {
	Allow(w http.ResponseWriter, r *http.Request) bool
}

// Verbs of the non-resource URLs the API server authorizes: reading any view is get on its
// path (/debug/status, ...), an action is create on its path (/debug/actions/retry, ...). The
// ClusterRoles of deploy/debug-rbac.yaml grant them.
const (
	VerbRead   = "get"
	VerbAction = "create"
)

// delegating asks the API server: a TokenReview for the bearer token, then a
// SubjectAccessReview for the path and verb, as kube-rbac-proxy and controller-runtime's
// metrics filter do, with their answers cached briefly (reviews.go). It calls the two APIs
// itself rather than through k8s.io/apiserver's delegating configs, whose dependencies made
// the runner's binary a third larger and its resident memory 14 MB more (docs/benchmarks.md).
type delegating struct {
	reviews  reviewer
	logger   *slog.Logger
	warnOnce sync.Once // the runner misses system:auth-delegator
}

// NewDelegatingAuthorizer authenticates and authorizes requests through the API server that
// client reaches. The runner's identity needs create on tokenreviews and subjectaccessreviews
// (the system:auth-delegator ClusterRole).
func NewDelegatingAuthorizer(client kubernetes.Interface, logger *slog.Logger) (Authorizer, error) {
	return &delegating{reviews: reviewer{client: client}, logger: logger}, nil
}

func (d *delegating) Allow(w http.ResponseWriter, r *http.Request) bool {
	user, ok, err := d.reviews.authenticate(r)
	if err != nil && forbidden(err) {
		d.cannotAsk(w, "tokenreviews", err)
		return false
	}
	if !ok {
		if err != nil && !errors.Is(err, errNoToken) { // a token the API server rejects comes with its reason
			d.logger.Debug("debug API: authentication failed", "error", err.Error())
		}
		writeError(w, http.StatusUnauthorized, "Unauthorized: send a bearer token the API server accepts (kubectl create token ...)")
		return false
	}
	verb := VerbRead
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		verb = VerbAction
	}
	dec, err := d.reviews.authorize(r.Context(), user, verb, r.URL.Path)
	if err != nil {
		d.cannotAsk(w, "subjectaccessreviews", err)
		return false
	}
	if !dec.allowed {
		msg := fmt.Sprintf("Forbidden: user %q may not %s %s", user.Username, verb, r.URL.Path)
		if dec.reason != "" {
			msg += ": " + dec.reason
		}
		writeError(w, http.StatusForbidden, msg)
		return false
	}
	return true
}

// cannotAsk answers a request the runner could not ask the API server about (503: the
// caller's token is not at fault). When the runner's own identity is forbidden to create
// what (tokenreviews, subjectaccessreviews) it says so to the caller and, once, at WARN;
// other failures of a SubjectAccessReview (the API server unreachable) are logged at WARN,
// per request, as before. A failed TokenReview other than Forbidden is the caller's 401.
func (d *delegating) cannotAsk(w http.ResponseWriter, what string, err error) {
	if !forbidden(err) {
		d.logger.Warn("debug API: authorization failed", "asking", what, "error", err.Error())
		writeError(w, http.StatusServiceUnavailable, "the runner cannot check this request with the API server now: "+err.Error())
		return
	}
	d.warnOnce.Do(func() {
		d.logger.Warn("debug API: the runner's identity may not create "+what+", so it cannot authenticate or authorize any caller: "+
			"bind it to the ClusterRole system:auth-delegator (deploy/debug-rbac.yaml does)", "missing", "create "+what, "error", err.Error())
	})
	writeError(w, http.StatusServiceUnavailable, "the runner cannot check callers: its own identity may not create "+what+
		" (its ServiceAccount needs the ClusterRole system:auth-delegator; see deploy/debug-rbac.yaml)")
}

// forbidden reports whether err, or one of an aggregate's errors (the authenticator's
// union), is the API server's Forbidden.
func forbidden(err error) bool {
	if apierrors.IsForbidden(err) {
		return true
	}
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		return slices.ContainsFunc(agg.Errors(), forbidden)
	}
	return false
}
