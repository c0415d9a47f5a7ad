package dynamicinformer

import (
	"sync"

	"k8s.io/client-go/tools/cache"
)

// Informer is one user's handle on a shared informer. The informer's cache holds the objects
// every user sees; they must not be mutated.
type Informer struct {
	key      Key
	informer cache.SharedIndexInformer
	factory  *Factory
	once     sync.Once
}

// Key is the key the handle was acquired with.
func (i *Informer) Key() Key { return i.key }

// Informer is the shared client-go informer. Add and remove your own event handlers; do not
// call Run or SetTransform.
func (i *Informer) Informer() cache.SharedIndexInformer { return i.informer }

// Release gives the handle back; the informer stops when its last handle is released.
// Release is idempotent.
func (i *Informer) Release() {
	i.once.Do(func() { i.factory.release(i.key) })
}
