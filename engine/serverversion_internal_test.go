package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

// TestServerOlderThanTheWindowWarnsOnce reads /version from a fake discovery and counts the
// WARN records the start-up check writes.
func TestServerOlderThanTheWindowWarnsOnce(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		info version.Info
		warn bool
	}{
		{"oldest supported", version.Info{GitVersion: "v1.34.0", Major: "1", Minor: "34"}, false},
		{"newest tested", version.Info{GitVersion: "v1.37.2", Major: "1", Minor: "37"}, false},
		{"newer than tested", version.Info{GitVersion: "v1.38.0", Major: "1", Minor: "38"}, false},
		{"one minor older", version.Info{GitVersion: "v1.33.5", Major: "1", Minor: "33"}, true},
		{"provider suffix", version.Info{GitVersion: "v1.30.14-eks-931bdca", Major: "1", Minor: "30+"}, true},
		{"provider suffix supported", version.Info{GitVersion: "v1.35.2-gke.1485000", Major: "1", Minor: "35+"}, false},
		{"gitVersion unparsable, fields older", version.Info{GitVersion: "custom", Major: "1", Minor: "32+"}, true},
		{"nothing parses", version.Info{GitVersion: "custom"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			disc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}, FakedServerVersion: &tc.info}
			var logs bytes.Buffer
			st, err := readServer(t.Context(), disc, "https://127.0.0.1:6443", slog.New(slog.NewJSONHandler(&logs, nil)))
			if err != nil {
				t.Fatalf("readServer: %v", err)
			}
			if st.Version != tc.info.GitVersion || st.Host != "https://127.0.0.1:6443" || st.OlderThanSupported != tc.warn {
				t.Fatalf("status = %+v, want version %s, olderThanSupported=%v", *st, tc.info.GitVersion, tc.warn)
			}
			warns := warnRecords(t, logs.String())
			if !tc.warn {
				if len(warns) != 0 {
					t.Fatalf("WARN for %s: %v", tc.info.GitVersion, warns)
				}
				return
			}
			if len(warns) != 1 {
				t.Fatalf("want exactly one WARN for %s, got %d: %v", tc.info.GitVersion, len(warns), warns)
			}
			if warns[0]["version"] != tc.info.GitVersion || warns[0]["supported"] != "v1.34 to v1.37" {
				t.Fatalf("the WARN must name the version and the window: %v", warns[0])
			}
		})
	}
}

func TestServerVersionErrorIsReturned(t *testing.T) {
	t.Parallel()
	fake := &clienttesting.Fake{}
	refused := errors.New("connection refused")
	fake.AddReactor("get", "version", func(clienttesting.Action) (bool, runtime.Object, error) { return true, nil, refused })
	var logs bytes.Buffer
	_, err := readServer(t.Context(), &fakediscovery.FakeDiscovery{Fake: fake}, "https://127.0.0.2:1", slog.New(slog.NewJSONHandler(&logs, nil)))
	if !errors.Is(err, refused) {
		t.Fatalf("err = %v, want %v", err, refused)
	}
	if logs.Len() != 0 {
		t.Fatalf("logged on failure: %s", logs.String())
	}
}

func warnRecords(t *testing.T, out string) []map[string]any {
	t.Helper()
	var warns []map[string]any
	for line := range strings.Lines(out) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["level"] == "WARN" {
			warns = append(warns, rec)
		}
	}
	return warns
}
