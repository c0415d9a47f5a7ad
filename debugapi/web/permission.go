package web

import (
	"net/http"

	"github.com/jsinformer/jsinformer/debugapi"
)

// CanAct returns Options.CanAct for a debug listener guarded by auth: a request may act when
// auth would let the same caller POST an action. nil auth (loopback) lets everyone act.
func CanAct(auth debugapi.Authorizer) func(r *http.Request) bool {
	if auth == nil {
		return nil
	}
	return func(r *http.Request) bool {
		probe := r.Clone(r.Context())
		probe.Method = http.MethodPost
		probe.URL.Path = "/debug/actions/retry"
		probe.Body = http.NoBody
		return auth.Allow(discard{}, probe)
	}
}

// discard swallows the refusal auth writes for a probe.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}
