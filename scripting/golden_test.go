package scripting

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden with the current output")

// TestGoldenShapes pins what scripts see: objects and ctx as JSON, per kind of event.
func TestGoldenShapes(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join("testdata", "shapes.js"))
	if err != nil {
		t.Fatal(err)
	}
	newer := sample()
	newer["metadata"].(map[string]any)["resourceVersion"] = "8"
	newer["spec"].(map[string]any)["replicas"] = int64(5)
	tests := []struct {
		name string
		call func(*Script) error
	}{
		{"add", func(s *Script) error {
			return s.OnAdd(sample(), Event{Resource: "apps/v1/deployments", IsInInitialList: true})
		}},
		{"update", func(s *Script) error {
			return s.OnUpdate(sample(), newer, Event{Resource: "apps/v1/deployments"})
		}},
		{"delete", func(s *Script) error { return s.OnDelete(sample(), Event{Resource: "apps/v1/deployments"}) }},
		{"delete-tombstone", func(s *Script) error {
			return s.OnDelete(nil, Event{Resource: "apps/v1/deployments", FinalStateUnknown: true})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newTestScript(t, "shapes.js", string(src), Options{})
			if err := tt.call(s); err != nil {
				t.Fatal(err)
			}
			var got []byte
			onRuntime(t, s, func(in *instance) { got = []byte(in.rt.Get("out").String()) })
			golden := filepath.Join("testdata", tt.name+".golden")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if string(got) != string(want) {
				t.Errorf("%s differs from the output:\n%s", golden, got)
			}
		})
	}
}
