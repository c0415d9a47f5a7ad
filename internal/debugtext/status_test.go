package debugtext_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/internal/debugtext"
	"github.com/jsinformer/jsinformer/status"
)

// TestStatusMissingPermissions: runner status lists what the runner lacks with the command
// that grants it, and says nothing of permissions when nothing is missing.
func TestStatusMissingPermissions(t *testing.T) {
	t.Parallel()
	var none bytes.Buffer
	debugtext.Status(&none, status.Status{Ready: true})
	if strings.Contains(none.String(), "permissions") {
		t.Errorf("a permissions section with nothing missing:\n%s", none.String())
	}
	var out bytes.Buffer
	debugtext.Status(&out, status.Status{Ready: true, Permissions: []status.PermissionStatus{
		{Script: "07-ttl-cleanup.js", Verb: "delete", Resource: "jobs.batch", Why: "k8s.delete at 07-ttl-cleanup.js:58",
			Grant: "kubectl create clusterrole NAME --verb=delete --resource=jobs.batch"},
		{Script: "05.js", Verb: "create", Resource: "secrets", Namespace: "web", Why: "k8s.patch", Refused: 3,
			Grant: "kubectl create role NAME -n web --verb=create --resource=secrets"},
	}})
	lines := strings.Split(out.String(), "\n")
	i := 0
	for i < len(lines) && lines[i] != "Missing permissions:" {
		i++
	}
	if i+3 >= len(lines) {
		t.Fatalf("no Missing permissions section:\n%s", out.String())
	}
	for j, want := range [][]string{
		{"SCRIPT", "VERB", "RESOURCE", "NAMESPACE", "WHY", "REFUSED", "GRANT"},
		{"07-ttl-cleanup.js", "delete", "jobs.batch", "(all)", "k8s.delete at 07-ttl-cleanup.js:58", "-", "kubectl create clusterrole NAME --verb=delete --resource=jobs.batch"},
		{"05.js", "create", "secrets", "web", "k8s.patch", "3", "kubectl create role NAME -n web --verb=create --resource=secrets"},
	} {
		line := lines[i+1+j]
		for _, cell := range want {
			if !strings.Contains(line, cell) {
				t.Errorf("line %q lacks %q", line, cell)
			}
		}
	}
}

// TestStatusShowsTheAPIServer: runner status names the API server's version and whether it is
// within the support window.
func TestStatusShowsTheAPIServer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		server status.ServerStatus
		want   string
	}{
		{status.ServerStatus{Host: "https://127.0.0.1:6443", Version: "v1.37.2", Supported: "v1.34 to v1.37"},
			"API server: v1.37.2 at https://127.0.0.1:6443, supported (v1.34 to v1.37)\n"},
		{status.ServerStatus{Host: "https://127.0.0.1:6443", Version: "v1.33.5", Supported: "v1.34 to v1.37", OlderThanSupported: true},
			"API server: v1.33.5 at https://127.0.0.1:6443, OLDER than the supported versions (v1.34 to v1.37)\n"},
	} {
		var out bytes.Buffer
		debugtext.Status(&out, status.Status{Ready: true, Server: &tc.server})
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("status lacks %q:\n%s", tc.want, out.String())
		}
	}
	var none bytes.Buffer
	debugtext.Status(&none, status.Status{Ready: true})
	if strings.Contains(none.String(), "API server") {
		t.Errorf("an API server line without a server:\n%s", none.String())
	}
}

func TestStatusNamesTheScriptsSharingAWebhookEntry(t *testing.T) {
	t.Parallel()
	st := status.Status{Ready: true, Webhooks: []status.WebhookStatus{
		{Script: "a.js", Name: "a-js-and-1-12345678.validate.jsinformer.io", Webhook: "validate", SharedWith: []string{"c.js"}},
		{Script: "b.js", Name: "b-js-87654321.validate.jsinformer.io", Webhook: "validate"},
	}}
	var b strings.Builder
	debugtext.Status(&b, st)
	out := b.String()
	if !strings.Contains(out, "a-js-and-1-12345678.validate.jsinformer.io (shared with c.js)") || strings.Contains(out, "87654321.validate.jsinformer.io (shared") {
		t.Errorf("status does not tell which scripts share an entry:\n%s", out)
	}
}

// TestStatusAudit: runner status lists the audit scripts with their counts and initial pass,
// warns when the report CRDs are missing, and shows no audit section when nothing audits.
func TestStatusAudit(t *testing.T) {
	t.Parallel()
	var none bytes.Buffer
	debugtext.Status(&none, status.Status{Ready: true})
	if strings.Contains(none.String(), "Audit") {
		t.Errorf("an audit section with no audit:\n%s", none.String())
	}
	var out bytes.Buffer
	debugtext.Status(&out, status.Status{Ready: true, Audit: &status.AuditStatus{ReportsMissing: true, Scripts: []status.AuditScriptStatus{
		{Script: "team.js", Results: map[string]int{"pass": 7, "fail": 2}},
		{Script: "slow.js", InitialPass: true, Audited: 3, Objects: 20, Results: map[string]int{"error": 3}},
	}}})
	text := out.String()
	for _, want := range []string{"kept in memory only", "deploy/crds/openreports.yaml"} {
		if !strings.Contains(text, want) {
			t.Errorf("status lacks %q:\n%s", want, text)
		}
	}
	lines := map[string][]string{}
	for _, l := range strings.Split(text, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			lines[f[0]] = f
		}
	}
	if got := strings.Join(lines["team.js"], " "); got != "team.js done 7 2 0 0 0" {
		t.Errorf("team.js line = %q", got)
	}
	if got := strings.Join(lines["slow.js"], " "); got != "slow.js running (3 of 20 audited) 0 0 0 3 0" {
		t.Errorf("slow.js line = %q", got)
	}
}

// TestStatusPartitionedInformers: runner status shows a partitioned informer's slices, who
// filters them and why, the objects received and kept and the bytes received; the replica's
// partitions and its partitioned scripts' cached objects; nothing without partitions.
func TestStatusPartitionedInformers(t *testing.T) {
	t.Parallel()
	var none bytes.Buffer
	debugtext.Status(&none, status.Status{Ready: true, Informers: []status.InformerStatus{{WatchStatus: status.WatchStatus{Resource: "v1/pods"}}}})
	if strings.Contains(none.String(), "Partitioned") {
		t.Errorf("a partitions section without partitioned informers:\n%s", none.String())
	}
	var out bytes.Buffer
	debugtext.Status(&out, status.Status{Ready: true, Informers: []status.InformerStatus{
		{WatchStatus: status.WatchStatus{Resource: "v1/pods"}, BytesReceived: 3 << 20, Shard: &status.InformerShard{Partition: "namespace slices 0-127 of 256",
			Mode: "client", Reason: "the API server's list answer has no shardInfo", Received: 40, Kept: 21}},
	}, Shard: &status.ShardStatus{Identity: "a", Members: []string{"a", "b"}, Valid: true,
		Partitions: []string{"namespace slices 0-127 of 256"}, Cached: map[string]int{"b.js": 7, "a.js": 21}}})
	for _, want := range []string{"\nShard caches: namespace slices 0-127 of 256\n", "\nShard cached objects: a.js=21 b.js=7\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no line %q in:\n%s", strings.TrimSpace(want), out.String())
		}
	}
	lines := strings.Split(out.String(), "\n")
	i := 0
	for i < len(lines) && lines[i] != "Partitioned informers:" {
		i++
	}
	if i+2 >= len(lines) {
		t.Fatalf("no Partitioned informers section:\n%s", out.String())
	}
	for _, cell := range []string{"v1/pods", "(all)", "namespace slices 0-127 of 256", "client", "40", "21", "3.0 MiB", "no shardInfo"} {
		if !strings.Contains(lines[i+2], cell) {
			t.Errorf("line %q lacks %q", lines[i+2], cell)
		}
	}
}

// TestStatusShowsTheOutbox: runner status counts each serving script's outbox messages by
// state and lists the ones given up with their last error; no section without an outbox.
func TestStatusShowsTheOutbox(t *testing.T) {
	t.Parallel()
	var none bytes.Buffer
	debugtext.Status(&none, status.Status{Ready: true, Scripts: []status.ScriptStatus{{Name: "a.js",
		Versions: []status.VersionStatus{{Hash: "h1", State: status.VersionCurrent}}}}})
	if strings.Contains(none.String(), "Outbox") {
		t.Errorf("an Outbox section without an outbox:\n%s", none.String())
	}
	var out bytes.Buffer
	at := time.Date(2026, 12, 7, 18, 0, 0, 0, time.UTC)
	debugtext.Status(&out, status.Status{Ready: true, Scripts: []status.ScriptStatus{{Name: "notify.js",
		Versions: []status.VersionStatus{{Hash: "h1", State: status.VersionCurrent, Outbox: &status.OutboxStatus{
			Pending: 2, Claimed: 1, Done: 40, Failed: 1, Listed: at,
			Failures: []status.OutboxFailure{{Key: "rollout-failed/u1/3", Attempts: 8, Error: "webhook answered 503", Time: at}},
		}}}}}})
	text := out.String()
	for _, want := range []string{"Outbox (as last listed):", "PENDING", "notify.js", "40",
		`notify.js: "rollout-failed/u1/3" failed after 8 attempts at 2026-12-07T18:00:00Z: webhook answered 503`} {
		if !strings.Contains(text, want) {
			t.Errorf("runner status lacks %q:\n%s", want, text)
		}
	}
}
