package bench

import (
	"flag"
	"os"
	"testing"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

var env *controlplane.ControlPlane

// TestMain starts the control plane only when benchmarks are requested: the package's tests
// are pure and must not pay for it.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(clientGoChild())
	}
	flag.Parse()
	if bench := flag.Lookup("test.bench"); bench == nil || bench.Value.String() == "" {
		os.Exit(m.Run())
	}
	code := controlplane.Main(m, &env)
	if baselineDir != "" {
		_ = os.RemoveAll(baselineDir)
	}
	os.Exit(code)
}
