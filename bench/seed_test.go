package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

const (
	// benchNamespace holds the seeded realistic Deployments and nothing else.
	benchNamespace = "bench"
	// smallNamespace holds the seeded small Deployments and nothing else.
	smallNamespace = "bench-small"
	seedWorkers    = 16
	// objectsEnv overrides seedCount, for the scale curve of docs/benchmarks.md.
	objectsEnv = "JSINFORMER_BENCH_OBJECTS"
)

// seedCount is the cache size every benchmark is about: 20,000 (DESIGN.md section 6), or
// $JSINFORMER_BENCH_OBJECTS.
var seedCount = func() int {
	if n, err := strconv.Atoi(os.Getenv(objectsEnv)); err == nil && n > 0 {
		return n
	}
	return 20000
}()

var (
	deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	namespacesGVR  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// shape is one kind of seeded Deployment, in a namespace of its own, created once per
// process on first use.
type shape struct {
	name      string
	namespace string
	object    func(i int) map[string]any
	once      sync.Once
	err       error
}

var (
	// realistic are small typical services (objects_test.go): the figures of docs/benchmarks.md.
	realistic = &shape{name: "realistic", namespace: benchNamespace, object: deploymentObject}
	// small are minimal Deployments, the shape of DESIGN.md section 6's yardstick.
	small = &shape{name: "small", namespace: smallNamespace, object: smallDeploymentObject}
)

// seeded returns the control plane once namespace "bench" holds seedCount Deployments,
// creating them on the first call in this process.
func seeded(b *testing.B) *controlplane.ControlPlane { return seededShape(b, realistic) }

// seededShape returns the control plane once sh's namespace holds seedCount Deployments.
func seededShape(b *testing.B, sh *shape) *controlplane.ControlPlane {
	b.Helper()
	cp := controlplane.Require(b, env)
	sh.once.Do(func() {
		start := time.Now()
		sh.err = seed(context.Background(), dynamic.NewForConfigOrDie(cp.Config), sh)
		b.Logf("seeded %d %s deployments in %s", seedCount, sh.name, time.Since(start).Round(time.Millisecond))
	})
	if sh.err != nil {
		b.Fatalf("seed %s deployments: %v", sh.name, sh.err)
	}
	return cp
}

func seed(ctx context.Context, dyn dynamic.Interface, sh *shape) error {
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": sh.namespace}}}
	if _, err := dyn.Resource(namespacesGVR).Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace: %w", err)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range seedWorkers {
		wg.Go(func() {
			for i := range next {
				if err := createDeployment(ctx, dyn, sh, i); err != nil {
					cancel(err)
				}
			}
		})
	}
	feed(ctx, next)
	wg.Wait()
	return context.Cause(ctx) // nil unless a create failed
}

// feed hands out the object numbers until done or ctx is cancelled, then closes next.
func feed(ctx context.Context, next chan<- int) {
	defer close(next)
	for i := range seedCount {
		select {
		case next <- i:
		case <-ctx.Done():
			return
		}
	}
}

func createDeployment(ctx context.Context, dyn dynamic.Interface, sh *shape, i int) error {
	obj := &unstructured.Unstructured{Object: sh.object(i)}
	_, err := dyn.Resource(deploymentsGVR).Namespace(sh.namespace).Create(ctx, obj, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create deployment %s: %w", obj.GetName(), err)
	}
	return nil
}
