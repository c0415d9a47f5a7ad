package scriptcache

import (
	"errors"
	"fmt"
	"strings"
)

// Partition is the part of the cluster a partitioned version caches (--shard-cache): a
// lookup that could need an object outside it is refused, never answered from a partial
// cache. The nil *Partition is a full cache: every lookup is answered.
type Partition struct {
	// Field is "namespace" or "uid", for messages.
	Field string
	// Namespace reports whether a namespace's objects are all cached here; nil (uid
	// partitions) when no namespace is: every lookup is refused.
	Namespace func(namespace string) bool
}

// ErrOutsidePartition is wrapped by the error of a lookup the partition cannot answer.
var ErrOutsidePartition = errors.New("outside this replica's cache partition")

// checkNamespace refuses a lookup in namespace ("" being all namespaces) unless it is wholly
// cached here.
func (p *Partition) checkNamespace(namespace string) error {
	switch {
	case p == nil:
		return nil
	case p.Namespace == nil:
		return fmt.Errorf("check lookup: the script's cache is partitioned by %s (shard: %q under --shard-cache), so no lookup can be answered whole: %w; declare shard: \"none\" or \"namespace\"",
			p.Field, p.Field, ErrOutsidePartition)
	case namespace == "":
		return fmt.Errorf("check lookup: a lookup over every namespace in a script partitioned by namespace (shard under --shard-cache) would answer from part of the cluster: %w; name a namespace, or declare shard: \"none\"",
			ErrOutsidePartition)
	case !p.Namespace(namespace):
		return fmt.Errorf("check lookup: namespace %q is cached by another replica: %w; look up the event's own namespace, or declare shard: \"none\"",
			namespace, ErrOutsidePartition)
	}
	return nil
}

// checkIndexValue refuses an index lookup unless its value is "NAMESPACE/…" with NAMESPACE
// wholly cached here: an index value names no namespace otherwise, and the objects indexed
// under it may live anywhere.
func (p *Partition) checkIndexValue(value string) error {
	if p == nil || p.Namespace == nil {
		return p.checkNamespace("")
	}
	ns, _, found := strings.Cut(value, "/")
	if !found {
		return fmt.Errorf("check lookup: index value %q names no namespace; in a script partitioned by namespace (shard under --shard-cache) index values must be \"NAMESPACE/...\": %w",
			value, ErrOutsidePartition)
	}
	return p.checkNamespace(ns)
}
