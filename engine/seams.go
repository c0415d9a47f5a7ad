package engine

import (
	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/dynamicinformer"
)

// The engine's two dependencies on the cluster, as small interfaces: the real ones are
// dynamicinformer's Factory and Resolver; unit tests of the loader's transitions use fakes.

// informerSource hands out shared informers by key and reports on them.
type informerSource interface {
	Acquire(key dynamicinformer.Key) (informerHandle, error)
	Health() []dynamicinformer.Health
	Active() map[dynamicinformer.Key]int
	Shutdown()
}

// informerHandle is one user's reference on a shared informer.
type informerHandle interface {
	Informer() cache.SharedIndexInformer
	Release()
}

// resourceResolver maps resource names as users write them to resources.
type resourceResolver interface {
	Resolve(name string) (dynamicinformer.Resource, error)
}

// factorySource adapts *dynamicinformer.Factory to informerSource.
type factorySource struct{ *dynamicinformer.Factory }

func (f factorySource) Acquire(key dynamicinformer.Key) (informerHandle, error) {
	return f.Factory.Acquire(key)
}
