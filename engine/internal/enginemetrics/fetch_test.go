package enginemetrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/jsinformer/jsinformer/scripting"
)

func TestFetchSeries(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	f := NewFetch(reg)
	f.Observe("n.js", scripting.RequestRecord{Method: "POST", Host: "hooks.example.com", Path: "/s/secret", Status: 204, Duration: 20 * time.Millisecond})
	f.Observe("n.js", scripting.RequestRecord{Method: "POST", Host: "hooks.example.com", Status: 503, Duration: time.Millisecond})
	f.Observe("n.js", scripting.RequestRecord{Method: "GET", Host: "10.0.0.1:80", Error: "refused"})
	want := `
# HELP jsinformer_fetch_errors_total Scripts' fetch requests that failed, by script, host and kind (refused, timeout, body_too_large, dns, tls, canceled, other).
# TYPE jsinformer_fetch_errors_total counter
jsinformer_fetch_errors_total{host="10.0.0.1:80",kind="refused",script="n.js"} 1
# HELP jsinformer_fetch_requests_total Scripts' fetch requests that got a response, by script, host and status class (2xx, 3xx, 4xx, 5xx).
# TYPE jsinformer_fetch_requests_total counter
jsinformer_fetch_requests_total{code="2xx",host="hooks.example.com",script="n.js"} 1
jsinformer_fetch_requests_total{code="5xx",host="hooks.example.com",script="n.js"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "jsinformer_fetch_requests_total", "jsinformer_fetch_errors_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(f.duration); n != 2 {
		t.Errorf("%d latency series, want one per host (2)", n)
	}
	f.Forget("n.js")
	if n := testutil.CollectAndCount(f.requests) + testutil.CollectAndCount(f.errors) + testutil.CollectAndCount(f.duration); n != 0 {
		t.Errorf("%d series left after Forget", n)
	}
}
