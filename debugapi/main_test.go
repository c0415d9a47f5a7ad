package debugapi_test

import (
	"testing"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

var env *controlplane.ControlPlane

func TestMain(m *testing.M) { controlplane.Exit(m, &env) }
