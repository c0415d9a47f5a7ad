package scripting

import (
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/dop251/goja"
)

// maxRetryAfterMs caps what util.retryAfter returns: a server asking for more than a day is
// not a reason to forget a key for longer.
const maxRetryAfterMs = 24 * 60 * 60 * 1000

// retryAfter is util.retryAfter(response, fallbackMs): the milliseconds a response's
// Retry-After header asks to wait (delay-seconds or an HTTP date, against the script's clock),
// for {requeueAfter}; fallbackMs (default null) when the header is missing or malformed.
func (u *utilModule) retryAfter(call goja.FunctionCall) goja.Value {
	defer u.guard("util.retryAfter")
	fallback := call.Argument(1)
	if isMissing(fallback) {
		fallback = goja.Null()
	}
	res, ok := call.Argument(0).(*goja.Object)
	if !ok {
		u.throwf("util.retryAfter: want a Response (from fetch), got %s", typeName(call.Argument(0)))
	}
	headers, ok := res.Get("headers").(*goja.Object)
	get, isFn := goja.AssertFunction(headerGetter(headers, ok))
	if !isFn {
		u.throwf("util.retryAfter: want a Response (from fetch): it has no headers.get")
	}
	v, err := get(headers, u.rt.ToValue("retry-after"))
	if err != nil {
		panic(err)
	}
	if ms, ok := u.parseRetryAfter(v); ok {
		return u.rt.ToValue(ms)
	}
	return fallback
}

func headerGetter(h *goja.Object, ok bool) goja.Value {
	if !ok || h == nil {
		return goja.Undefined()
	}
	return h.Get("get")
}

func (u *utilModule) parseRetryAfter(v goja.Value) (int64, bool) {
	if isMissing(v) {
		return 0, false
	}
	s := strings.TrimSpace(v.String())
	if secs, err := strconv.ParseInt(s, 10, 64); err == nil && secs >= 0 {
		return min(secs, maxRetryAfterMs/1000) * 1000, true
	}
	t, err := http.ParseTime(s)
	if err != nil {
		return 0, false
	}
	ms := t.Sub(u.now()).Milliseconds()
	return int64(math.Max(0, math.Min(float64(ms), maxRetryAfterMs))), true
}
