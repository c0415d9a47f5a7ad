package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// The client-go contender of BenchmarkProcessInitialSync is this test binary, re-executed
// with childEnv set: TestMain then runs clientGoChild instead of the tests.
const (
	childEnv      = "JSINFORMER_BENCH_CLIENT_GO"
	kubeconfigEnv = "JSINFORMER_BENCH_KUBECONFIG"
)

// clientGoCommand runs bin, a copy of this test binary, as the client-go contender.
func clientGoCommand(bin string) func(*testing.B, *controlplane.ControlPlane, *shape) *exec.Cmd {
	return func(b *testing.B, cp *controlplane.ControlPlane, sh *shape) *exec.Cmd {
		cmd := exec.CommandContext(b.Context(), bin, "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+sh.namespace, kubeconfigEnv+"="+cp.Kubeconfig)
		return cmd
	}
}

func testExecutable(b *testing.B) string {
	b.Helper()
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	return self
}

// clientGoChild runs a bare client-go dynamic informer with a Go handler on the namespace
// in childEnv, prints the marker at the seedCount-th add and returns the exit code.
func clientGoChild() int {
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv(kubeconfigEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "load kubeconfig:", err)
		return 1
	}
	inf := clientGoInformer(dynamic.NewForConfigOrDie(cfg), os.Getenv(childEnv), nil)
	h := &addCounter{want: seedCount, all: make(chan struct{})}
	if _, err := inf.AddEventHandler(h); err != nil {
		fmt.Fprintln(os.Stderr, "add event handler:", err)
		return 1
	}
	go inf.RunWithContext(context.Background())
	<-h.all
	fmt.Println(handledMarker)
	fmt.Printf("%s%d\n", ownPeakPrefix, ownPeakKB()) // its ru_maxrss would include its parent's
	return 0
}
