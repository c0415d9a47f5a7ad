package engine

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// SetOnCachedForTest makes onCached see every object entering an informer's cache.
func SetOnCachedForTest(c *Config, onCached func(*unstructured.Unstructured)) { c.onCached = onCached }

// SetHeapForTest makes the memory guard read heap instead of the process's live heap, so a
// test sharing its process with others decides what the guard sees.
func SetHeapForTest(c *Config, heap func() int64) { c.heap = heap }

// SetInformerRemindForTest sets the least time between two "still failing" reports of one
// informer (a minute by default).
func SetInformerRemindForTest(c *Config, d time.Duration) { c.remind = d }

// SetShardNamespacesForTest replaces the namespaces the ring's plan is made from by what
// namespaces returns, so that a test knows the plan before a replica joins
// (shardrange.NewPlan is deterministic), or decides when they change.
func SetShardNamespacesForTest(c *Config, namespaces func() []string) {
	c.shardNamespaces = func(context.Context) ([]string, error) { return namespaces(), nil }
}
