package bench

import "testing"

// TestCountReportWrites: only apiserver_request_total samples of group openreports.io with a
// write verb count, whatever their code or other labels.
func TestCountReportWrites(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text string
		want       int
	}{
		{"applies and deletes", `# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="openreports.io",resource="reports",scope="resource",subresource="",verb="APPLY",version="v1alpha1"} 120
apiserver_request_total{code="201",component="apiserver",dry_run="",group="openreports.io",resource="reports",scope="resource",subresource="",verb="APPLY",version="v1alpha1"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="openreports.io",resource="reports",scope="resource",subresource="",verb="DELETE",version="v1alpha1"} 4
`, 127},
		{"reads and other groups do not count", `apiserver_request_total{code="200",group="openreports.io",resource="reports",verb="LIST",version="v1alpha1"} 9
apiserver_request_total{code="200",group="openreports.io",resource="reports",verb="WATCH",version="v1alpha1"} 2
apiserver_request_total{code="200",group="apps",resource="deployments",verb="PATCH",version="v1"} 50
apiserver_request_duration_seconds_count{group="openreports.io",verb="APPLY"} 8
`, 0},
		{"a float sample", `apiserver_request_total{group="openreports.io",verb="CREATE"} 1e+03
`, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := countReportWrites(tc.text)
			if err != nil || got != tc.want {
				t.Errorf("countReportWrites = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

// TestAuditExpect: the expected results follow the seeded Deployments' shape (two teams in
// seven unregistered, a sidecar on every fourth) and count the flipped flip Deployments.
func TestAuditExpect(t *testing.T) {
	t.Parallel()
	got := auditExpect(100, 40)
	total := seedCount + 100
	for _, file := range auditPolicies {
		if n := got[file]["pass"] + got[file]["fail"]; n != total {
			t.Errorf("%s: %d results, want %d", file, n, total)
		}
	}
	base := auditExpect(0, 0)["team.js"]["fail"]
	if got["team.js"]["fail"] != base+40 {
		t.Errorf("team.js fails with 40 flipped = %d, want %d", got["team.js"]["fail"], base+40)
	}
	if got["images.js"]["fail"] != (total+3)/4 {
		t.Errorf("images.js fails = %d, want every fourth of %d", got["images.js"]["fail"], total)
	}
}
