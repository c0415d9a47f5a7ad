package offline

import (
	"context"

	"github.com/jsinformer/jsinformer/inspection"
)

// Explain is engine.Engine.Explain on the harness's engine: `runner test`'s h.explain. Call it
// between steps, like Status.
func (h *Harness) Explain(ctx context.Context, resource, key string, limit int) (inspection.Explanation, error) {
	return h.e.Explain(ctx, resource, key, limit)
}
