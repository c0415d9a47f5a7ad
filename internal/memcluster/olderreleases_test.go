package memcluster_test

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/discovery"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// The in-memory cluster behaves as KubernetesVersion (v1.37). make test-compat runs the
// cross-check against the older minors of the support window too, where a few answers differ
// in their wording only: beforeV137 holds what those releases (v1.34 to v1.36, whose code is
// the same there) answer instead, keyed by the corpus step. Anything else that differs still
// fails the cross-check.
var beforeV137 = map[string]string{
	// v1.37 checks that a patch is JSON before decoding it ("invalid JSON patch": apiserver's
	// validateAndTranscodePatch); before, the decoder's error is the message.
	"merge patch that is not JSON": "error decoding patch: unexpected end of JSON input",
}

// olderAnswers returns how to turn the in-memory cluster's answer to a step into the control
// plane's release's, when that release is older than KubernetesVersion.
func olderAnswers(t *testing.T, cp *controlplane.ControlPlane) func(step string, err error) error {
	t.Helper()
	disc, err := discovery.NewDiscoveryClientForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	info, err := disc.ServerVersionWithContext(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	server, err := utilversion.ParseGeneric(info.GitVersion)
	if err != nil {
		t.Fatalf("parse the control plane's version %q: %v", info.GitVersion, err)
	}
	if !server.LessThan(utilversion.MustParseGeneric("v1.37.0")) {
		return func(_ string, err error) error { return err }
	}
	return func(step string, err error) error {
		var status apierrors.APIStatus
		msg, ok := beforeV137[step]
		if !ok || !errors.As(err, &status) {
			return err
		}
		st := status.Status()
		st.Message = msg
		return &apierrors.StatusError{ErrStatus: st}
	}
}
