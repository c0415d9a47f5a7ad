package debugapi_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/jsinformer/jsinformer/debugapi"
)

// TestReviewsAreCachedAndRetried: the API server's answers decide (401, 403, 200), a token's
// review and a decision are asked once within their cache time, and a review the API server
// fails with a transient error (503) is asked again rather than answered as a 401.
func TestReviewsAreCachedAndRetried(t *testing.T) {
	t.Parallel()
	client := fake.NewClientset()
	var tokenReviews, sars, failFirst atomic.Int32
	failFirst.Store(1)
	client.PrependReactor("create", "tokenreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		tokenReviews.Add(1)
		if failFirst.Add(-1) >= 0 {
			return true, nil, apierrors.NewServiceUnavailable("etcd is busy")
		}
		tr := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenReview)
		tr.Status.Authenticated = tr.Spec.Token != "bad"
		tr.Status.User = authenticationv1.UserInfo{Username: "user-" + tr.Spec.Token, Groups: []string{"g"}}
		return true, tr, nil
	})
	client.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		sars.Add(1)
		sar := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview)
		sar.Status.Allowed = sar.Spec.User == "user-good" && sar.Spec.NonResourceAttributes.Verb == debugapi.VerbRead
		return true, sar, nil
	})
	auth, err := debugapi.NewDelegatingAuthorizer(client, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ask := func(method, token string) int {
		r := httptest.NewRequestWithContext(t.Context(), method, "/debug/status", nil)
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		if auth.Allow(w, r) {
			return http.StatusOK
		}
		return w.Code
	}
	for _, c := range []struct {
		method, token string
		want          int
	}{
		{http.MethodGet, "good", http.StatusOK}, // after one 503, retried
		{http.MethodGet, "good", http.StatusOK}, // cached: no review asked
		{http.MethodPost, "good", http.StatusForbidden},
		{http.MethodGet, "other", http.StatusForbidden},
		{http.MethodGet, "bad", http.StatusUnauthorized},
		{http.MethodGet, "", http.StatusUnauthorized},
	} {
		if got := ask(c.method, c.token); got != c.want {
			t.Errorf("%s with token %q answered %d, want %d", c.method, c.token, got, c.want)
		}
	}
	// good (a 503, then once), other, bad; "" asks nothing.
	if got := tokenReviews.Load(); got != 4 {
		t.Errorf("%d TokenReviews, want 4 (one retried, one cached)", got)
	}
	// good GET (once, then cached), good POST, other GET.
	if got := sars.Load(); got != 3 {
		t.Errorf("%d SubjectAccessReviews, want 3", got)
	}
}
