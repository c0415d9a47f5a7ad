package debugtext_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/internal/debugtext"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/ from the output")

// audited is an explanation of an object two audit scripts judge, at time at.
func audited(at time.Time) inspection.Explanation {
	return inspection.Explanation{
		Resource: "apps/v1/deployments", Object: "staging/api", Exists: true,
		Current: map[string]any{"metadata": map[string]any{"name": "api", "namespace": "staging", "resourceVersion": "812"}},
		Deliveries: []inspection.Delivery{
			{Script: "team.js", Version: "3f2a9c1e0b7d", State: "current", Delivered: true, Cached: true,
				Watch: &inspection.WatchView{Resource: "apps/v1/deployments", Namespace: "staging"}},
			{Script: "images.js", Version: "9c0d1e2f3a4b", State: "current", Delivered: true, Cached: true,
				Watch: &inspection.WatchView{Resource: "apps/v1/deployments"}},
		},
		Audit: []inspection.AuditResult{
			{Script: "images.js", Result: "error", Message: "images.js:4:11: TypeError: Cannot read property 'image' of undefined", Time: at.Add(-time.Hour)},
			{Script: "team.js", Result: "fail", Message: "no team label", Time: at},
		},
		Records:   []inspection.TraceRecord{},
		Recording: true,
	}
}

// TestExplanationAuditGolden: runner explain shows each audit script's result for the
// object, its message and since when, in text and in the debug API's JSON (go test
// ./internal/debugtext -run TestExplanationAuditGolden -update rewrites testdata/).
func TestExplanationAuditGolden(t *testing.T) {
	t.Parallel()
	var text bytes.Buffer
	debugtext.Explanation(&text, audited(time.Date(2026, 12, 7, 17, 45, 0, 0, time.Local)))
	data, err := json.MarshalIndent(audited(time.Date(2026, 12, 7, 17, 45, 0, 0, time.UTC)), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file string
		got  []byte
	}{
		{"explain-audit.txt", text.Bytes()},
		{"explain-audit.json", append(data, '\n')},
	} {
		golden := filepath.Join("testdata", tc.file)
		if *update {
			if err := os.WriteFile(golden, tc.got, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(tc.got, want) {
			t.Errorf("output differs from %s:\n%s", golden, tc.got)
		}
	}
}

// TestExplanationWithoutAudit: an object no script audits shows no audit section, and its
// JSON has no audit field.
func TestExplanationWithoutAudit(t *testing.T) {
	t.Parallel()
	x := audited(time.Now())
	x.Audit = nil
	var text bytes.Buffer
	debugtext.Explanation(&text, x)
	if bytes.Contains(text.Bytes(), []byte("Audit")) {
		t.Errorf("an audit section without results:\n%s", text.String())
	}
	data, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(`"audit"`)) {
		t.Errorf("an audit field without results: %s", data)
	}
}
