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
	srv, _ := newTestServer(t, serverPolicy, Config{Observe: m.Observe, Answered: m.ObserveAnswer})
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
	// Three reviews answered, each timed once; the bad request was answered by no script.
	if n := answerCount(t, reg, "validate"); n != 3 {
		t.Errorf("jsinformer_admission_request_duration_seconds counted %d reviews, want 3", n)
	}
}

// answerCount is the number of reviews of kind in jsinformer_admission_request_duration_seconds.
func answerCount(t *testing.T, reg prometheus.Gatherer, kind string) uint64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "jsinformer_admission_request_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) == 1 && m.GetLabel()[0].GetValue() == kind {
				return m.GetHistogram().GetSampleCount()
			}
		}
	}
	return 0
}
