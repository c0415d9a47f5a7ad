package dynamicinformer

import (
	"errors"
	"log/slog"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// streamingSupport is what one Factory has learnt of its API server's streaming lists (a
// watch with sendInitialEvents, the WatchList feature): an API server with that feature off
// (its default in Kubernetes 1.33, and a flag in every version) answers such a watch "422
// Invalid" naming the field. The first refusal is remembered for the factory's life: from then
// on no informer of it asks again (the reflector lists instead, and the watch proxy answers
// "410 Gone" by handing it to the reflector, which lists), and a refusal is never reported as
// the informer failing. Detected from the answer, never from the server's version. Safe for
// concurrent use; nil means nothing learnt (tests that build a listWatch alone).
type streamingSupport struct {
	refused atomic.Bool
	logger  *slog.Logger
}

// errStreamingRefused is what a streaming list gets, without a request, once the API server
// has refused one; the reflector then lists.
var errStreamingRefused = errors.New("watch with sendInitialEvents: the API server refuses streaming lists (its WatchList feature is off)")

// isStreamingRefused reports whether err is the API server refusing sendInitialEvents.
func isStreamingRefused(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, cause := range status.Status().Details.Causes {
		if cause.Field == "sendInitialEvents" {
			return true
		}
	}
	return false
}

// noteRefusal remembers a refusal, logging the first.
func (s *streamingSupport) noteRefusal(err error) {
	if s != nil && s.refused.CompareAndSwap(false, true) {
		s.logger.Info("the API server refuses streaming lists; informers list instead", "error", err.Error())
	}
}

// isRefused reports whether the API server has refused a streaming list.
func (s *streamingSupport) isRefused() bool { return s != nil && s.refused.Load() }
