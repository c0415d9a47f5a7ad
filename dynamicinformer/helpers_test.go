package dynamicinformer_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

var nameSeq atomic.Int64

// uniqueName is prefix with a number unique in this process, so tests can run again (-count)
// against the same server: namespaces never finish deleting there, and CRDs stay.
func uniqueName(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, nameSeq.Add(1))
}

func contextWithTimeout(t *testing.T, d time.Duration) (context.Context, context.CancelFunc) {
	t.Helper()
	return context.WithTimeout(t.Context(), d)
}
