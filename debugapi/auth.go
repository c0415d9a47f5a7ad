package debugapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
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
// metrics filter do. Answers are cached briefly (k8s.io/apiserver's delegating configs).
type delegating struct {
	authn    authenticator.Request
	authz    authorizer.Authorizer
	logger   *slog.Logger
	warnOnce sync.Once // the runner misses system:auth-delegator
}

// NewDelegatingAuthorizer authenticates and authorizes requests through the API server that
// client reaches. The runner's identity needs create on tokenreviews and subjectaccessreviews
// (the system:auth-delegator ClusterRole).
func NewDelegatingAuthorizer(client kubernetes.Interface, logger *slog.Logger) (Authorizer, error) {
	backoff := &wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
	authn, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		TokenAccessReviewClient: client.AuthenticationV1(), TokenAccessReviewTimeout: 10 * time.Second,
		WebhookRetryBackoff: backoff, CacheTTL: 10 * time.Second,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("build the debug API's authenticator: %w", err)
	}
	authz, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: client.AuthorizationV1(), AllowCacheTTL: 10 * time.Second, DenyCacheTTL: 5 * time.Second,
		WebhookRetryBackoff: backoff,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("build the debug API's authorizer: %w", err)
	}
	return &delegating{authn: authn, authz: authz, logger: logger}, nil
}

func (d *delegating) Allow(w http.ResponseWriter, r *http.Request) bool {
	res, ok, err := d.authn.AuthenticateRequest(r)
	if err != nil && forbidden(err) {
		d.cannotAsk(w, "tokenreviews", err)
		return false
	}
	if err != nil || !ok {
		if err != nil { // a token the API server rejects comes with its reason as an error
			d.logger.Debug("debug API: authentication failed", "error", err.Error())
		}
		writeError(w, http.StatusUnauthorized, "Unauthorized: send a bearer token the API server accepts (kubectl create token ...)")
		return false
	}
	verb := VerbRead
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		verb = VerbAction
	}
	attrs := authorizer.AttributesRecord{User: res.User, Verb: verb, Path: r.URL.Path}
	decision, reason, err := d.authz.Authorize(r.Context(), attrs)
	if err != nil {
		d.cannotAsk(w, "subjectaccessreviews", err)
		return false
	}
	if decision != authorizer.DecisionAllow {
		msg := fmt.Sprintf("Forbidden: user %q may not %s %s", res.User.GetName(), verb, r.URL.Path)
		if reason != "" {
			msg += ": " + reason
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
