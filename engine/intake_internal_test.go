package engine

import (
	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/engine/internal/fanout"
	"github.com/jsinformer/jsinformer/engine/internal/version"
)

// handlerFor is a client-go handler queueing sub's events onto its version's intake: a
// fanout with sub its only subscriber and no record, for tests that play client-go's part.
func handlerFor(sub *version.Subscription) cache.ResourceEventHandler {
	return fanout.Handler[version.Event](sub)
}
