package engine

import "github.com/jsinformer/jsinformer/plugins"

// onSettled reports the held failure of the content that settled, if any (package
// engine/internal/settle holds the failures of content read while it was changing).
func (e *Engine) onSettled(src plugins.Source) {
	h, ok := e.failures.Settled(src)
	if !ok {
		return
	}
	lastErr := ""
	if h.Again {
		lastErr = h.Err.Error() // the same content failed before: not news
	}
	e.loadFailed(e.logger.With("script", h.Src.Name, "version", h.Src.Hash), h.Src, h.Err, lastErr)
}
