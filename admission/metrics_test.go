package admission

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"
)

func TestMetricsCountDecisionsByOutcome(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	srv, _ := newTestServer(t, serverPolicy, Config{Observe: m.Observe})
	for _, user := range []string{"alice", "mallory", "mallory"} {
		post(t, srv.URL+"/validate/team/policy.js", review(t, admissionv1.Create, user, configMap(nil)))
	}
	post(t, srv.URL+"/nowhere", nil) // a bad request is no decision
	want := `
# HELP jsinformer_admission_decisions_total Admission requests answered by scripts, by script, webhook (validate, mutate), operation and outcome (allowed, denied, warned, audited, errored).
# TYPE jsinformer_admission_decisions_total counter
jsinformer_admission_decisions_total{operation="CREATE",outcome="denied",script="policy.js",webhook="validate"} 2
jsinformer_admission_decisions_total{operation="CREATE",outcome="warned",script="policy.js",webhook="validate"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "jsinformer_admission_decisions_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(m.duration); n != 1 {
		t.Errorf("%d duration series, want 1", n)
	}
}
