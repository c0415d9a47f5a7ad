package bench

import (
	"context"
	"fmt"
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
	// benchNamespace holds the seeded Deployments and nothing else.
	benchNamespace = "bench"
	// seedCount is the cache size every benchmark is about (DESIGN.md section 6).
	seedCount   = 20000
	seedWorkers = 16
)

var (
	deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	namespacesGVR  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

	seedOnce sync.Once
	seedErr  error
)

// seeded returns the control plane once namespace "bench" holds seedCount Deployments,
// creating them on the first call in this process.
func seeded(b *testing.B) *controlplane.ControlPlane {
	b.Helper()
	cp := controlplane.Require(b, env)
	seedOnce.Do(func() {
		start := time.Now()
		seedErr = seed(context.Background(), dynamic.NewForConfigOrDie(cp.Config))
		b.Logf("seeded %d deployments in %s", seedCount, time.Since(start).Round(time.Millisecond))
	})
	if seedErr != nil {
		b.Fatalf("seed deployments: %v", seedErr)
	}
	return cp
}

func seed(ctx context.Context, dyn dynamic.Interface) error {
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": benchNamespace}}}
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
				if err := createDeployment(ctx, dyn, i); err != nil {
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

func createDeployment(ctx context.Context, dyn dynamic.Interface, i int) error {
	obj := &unstructured.Unstructured{Object: deploymentObject(i)}
	_, err := dyn.Resource(deploymentsGVR).Namespace(benchNamespace).Create(ctx, obj, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create deployment %s: %w", obj.GetName(), err)
	}
	return nil
}
