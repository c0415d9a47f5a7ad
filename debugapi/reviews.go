package debugapi

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The API server's answers are cached as kube-rbac-proxy and k8s.io/apiserver's delegating
// configs cache them: a token's review for tokenTTL, an allowed request for allowTTL and a
// denied one for denyTTL. A review is asked for at most reviewTimeout, and retried on the
// API server's transient errors (429, 5xx, timeouts) after reviewBackoff, growing by half,
// reviewAttempts times in all.
const (
	tokenTTL       = 10 * time.Second
	allowTTL       = 10 * time.Second
	denyTTL        = 5 * time.Second
	reviewTimeout  = 10 * time.Second
	reviewBackoff  = 500 * time.Millisecond
	reviewAttempts = 5
	reviewCacheMax = 4096 // entries of each cache; a full cache drops its expired entries, else all
)

// reviewer asks the API server about a caller: TokenReview, then SubjectAccessReview.
type reviewer struct {
	client    kubernetes.Interface
	tokens    ttlCache[[sha256.Size]byte, authenticationv1.UserInfo]
	decisions ttlCache[string, decision]
}

type decision struct {
	allowed bool
	reason  string
}

// errNoToken is a request without a bearer token.
var errNoToken = errors.New("no bearer token")

// authenticate returns the user the request's bearer token is, or ok false when the API
// server says it is no user's (with its reason as err, for the log).
func (rv *reviewer) authenticate(r *http.Request) (user authenticationv1.UserInfo, ok bool, err error) {
	token, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if token = strings.TrimSpace(token); !found || token == "" {
		return user, false, errNoToken
	}
	key := sha256.Sum256([]byte(token))
	if u, hit := rv.tokens.get(key); hit {
		return u, true, nil
	}
	ask := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}
	var review *authenticationv1.TokenReview
	err = retryReview(r.Context(), func(ctx context.Context) (err error) {
		review, err = rv.client.AuthenticationV1().TokenReviews().Create(ctx, ask.DeepCopy(), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return user, false, fmt.Errorf("create tokenreview: %w", err)
	}
	if !review.Status.Authenticated {
		return user, false, fmt.Errorf("token rejected: %s", review.Status.Error)
	}
	rv.tokens.put(key, review.Status.User, tokenTTL)
	return review.Status.User, true, nil
}

// authorize asks whether user may verb the non-resource path.
func (rv *reviewer) authorize(ctx context.Context, user authenticationv1.UserInfo, verb, path string) (decision, error) {
	key := strings.Join([]string{user.Username, user.UID, strings.Join(user.Groups, ","), fmt.Sprint(user.Extra), verb, path}, "\x00")
	if d, hit := rv.decisions.get(key); hit {
		return d, nil
	}
	ask := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extraOf(user),
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb},
	}}
	var sar *authorizationv1.SubjectAccessReview
	err := retryReview(ctx, func(ctx context.Context) (err error) {
		sar, err = rv.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, ask.DeepCopy(), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return decision{}, fmt.Errorf("create subjectaccessreview: %w", err)
	}
	d := decision{allowed: sar.Status.Allowed && !sar.Status.Denied, reason: sar.Status.Reason}
	ttl := denyTTL
	if d.allowed {
		ttl = allowTTL
	}
	rv.decisions.put(key, d, ttl)
	return d, nil
}

func extraOf(user authenticationv1.UserInfo) map[string]authorizationv1.ExtraValue {
	if len(user.Extra) == 0 {
		return nil
	}
	out := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
	for k, v := range user.Extra {
		out[k] = authorizationv1.ExtraValue(v)
	}
	return out
}

// retryReview calls create, each attempt bounded by reviewTimeout, until it succeeds, fails
// in a way a retry cannot mend, or ctx ends.
func retryReview(ctx context.Context, create func(context.Context) error) error {
	delay := reviewBackoff
	for attempt := 1; ; attempt++ {
		callCtx, cancel := context.WithTimeout(ctx, reviewTimeout)
		err := create(callCtx)
		cancel()
		if err == nil || attempt == reviewAttempts || !transient(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
		delay += delay / 2
	}
}

// transient reports whether the API server may answer differently if asked again.
func transient(err error) bool {
	return apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsUnexpectedServerError(err) ||
		!isAPIStatus(err)
}

func isAPIStatus(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status)
}

// ttlCache is a map whose entries expire; safe for concurrent use.
type ttlCache[K comparable, V any] struct {
	mu      sync.Mutex
	entries map[K]ttlEntry[V]
}

type ttlEntry[V any] struct {
	value   V
	expires time.Time
}

func (c *ttlCache[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok || time.Now().After(e.expires) {
		var zero V
		return zero, false
	}
	return e.value, true
}

func (c *ttlCache[K, V]) put(k K, v V, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = make(map[K]ttlEntry[V])
	}
	if len(c.entries) >= reviewCacheMax {
		now := time.Now()
		for key, e := range c.entries {
			if now.After(e.expires) {
				delete(c.entries, key)
			}
		}
		if len(c.entries) >= reviewCacheMax {
			clear(c.entries)
		}
	}
	c.entries[k] = ttlEntry[V]{value: v, expires: time.Now().Add(ttl)}
}
