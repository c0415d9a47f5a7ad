package check

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/ from the output")

// goldenReport is the report of mixed, plus an invalid document, by every policy.
func goldenReport(t *testing.T, mode Mode) *Report {
	t.Helper()
	only := map[string]string{"team.js": policies["team.js"], "unique.js": policies["unique.js"], "owner.js": policies["owner.js"]}
	rep, _ := runCheck(t, only, mixed+"---\nkind: ConfigMap\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\n", Options{Mode: mode})
	return rep
}

// TestOutputGolden: each format's output of one report, in each mode, as testdata/ has it
// (go test ./check -run TestOutputGolden -update rewrites them).
func TestOutputGolden(t *testing.T) {
	t.Parallel()
	writers := map[string]func(io.Writer, *Report) error{"txt": WriteText, "json": WriteJSON, "xml": WriteJUnit}
	for _, mode := range Modes {
		rep := goldenReport(t, mode)
		for ext, write := range writers {
			t.Run(string(mode)+"."+ext, func(t *testing.T) {
				var out bytes.Buffer
				if err := write(&out, rep); err != nil {
					t.Fatal(err)
				}
				golden := filepath.Join("testdata", "report-"+string(mode)+"."+ext)
				if *update {
					if err := os.WriteFile(golden, out.Bytes(), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatal(err)
				}
				if out.String() != string(want) {
					t.Errorf("output differs from %s:\n%s", golden, out.String())
				}
			})
		}
	}
}

// TestJSONShape: the JSON document decodes into the fields CI scripts read.
func TestJSONShape(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := WriteJSON(&out, goldenReport(t, ModeEnforce)); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Mode    string
		Scripts []string
		Objects []struct {
			File, Kind, Name string
			Document         int
			Admitted         bool
			Results          []struct {
				Script, Result, Message string
				Patch                   []map[string]any
			}
		}
		Problems []struct {
			File     string
			Document int
			Message  string
		}
		Summary  Summary
		ExitCode int
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	s := doc.Summary
	if doc.Mode != "enforce" || len(doc.Scripts) != 3 || len(doc.Objects) != 5 || doc.ExitCode != 2 ||
		s.Denied != 2 || s.Warned != 1 || s.Mutated != 4 || s.Passed != 5 || s.Problems != 1 {
		t.Fatalf("document %+v", doc)
	}
	if p := doc.Problems[0]; p.File != "manifests.yaml" || p.Document != 5 || p.Message != "not a manifest: no apiVersion" {
		t.Errorf("problem %+v", p)
	}
	b := doc.Objects[1]
	if b.Name != "b" || b.Admitted || b.Results[1].Result != Deny || b.Results[0].Patch[0]["path"] != "/data/owner" {
		t.Errorf("object b %+v", b)
	}
}

// TestJUnitShape: the XML counts its cases as CI systems expect; a denial is a failure in
// mode enforce only, a problem an error in every mode.
func TestJUnitShape(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		mode                     Mode
		tests, failures, errors_ int
	}{{ModeEnforce, 14, 2, 1}, {ModeWarn, 14, 0, 1}, {ModeAudit, 14, 0, 1}} {
		var out bytes.Buffer
		if err := WriteJUnit(&out, goldenReport(t, tt.mode)); err != nil {
			t.Fatal(err)
		}
		var doc junitSuites
		if err := xml.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatalf("not XML: %v\n%s", err, out.String())
		}
		if doc.Tests != tt.tests || doc.Failures != tt.failures || doc.Errors != tt.errors_ || len(doc.Suites) != 1 {
			t.Errorf("mode %s: tests %d failures %d errors %d suites %d, want %d %d %d 1", tt.mode, doc.Tests, doc.Failures, doc.Errors, len(doc.Suites), tt.tests, tt.failures, tt.errors_)
		}
		cases := 0
		for _, s := range doc.Suites {
			cases += len(s.Cases)
		}
		if cases != doc.Tests || !strings.HasPrefix(out.String(), xml.Header) {
			t.Errorf("mode %s: %d cases for tests=%d", tt.mode, cases, doc.Tests)
		}
	}
}
