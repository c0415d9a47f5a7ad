package engine

import "context"

// Explain is Engine.Explain on the offline engine: `runner test`'s h.explain.
func (o *Offline) Explain(ctx context.Context, resource, key string, limit int) (Explanation, error) {
	return o.e.Explain(ctx, resource, key, limit)
}
