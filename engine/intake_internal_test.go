package engine

import (
	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/engine/internal/fanout"
	"github.com/jsinformer/jsinformer/engine/internal/queue"
)

// handlerFor is a client-go handler queueing sub's events onto q: a fanout with sub its only
// subscriber and no record, for tests that play client-go's part.
func handlerFor(sub *subscription, q *queue.Queue[event]) cache.ResourceEventHandler {
	sub.Queue = q
	return fanout.Handler[event](sub)
}
