package debugapi

import "net/http"

// Authorizer decides, for a listener that is not on loopback, whether a request may proceed;
// when not, it has written the answer (401 or 403).
type Authorizer interface {
	Allow(w http.ResponseWriter, r *http.Request) bool
}
