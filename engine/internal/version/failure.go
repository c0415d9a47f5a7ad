package version

import (
	"errors"
	"log/slog"

	"github.com/jsinformer/jsinformer/scripting"
)

// LogFailure logs a script error on logger with its position and JS stack, and whether it
// timed out or was stuck.
func LogFailure(logger *slog.Logger, handler, resource, key string, err error) {
	attrs := []any{"handler", handler, "resource", resource, "object", key, "error", err.Error()}
	var se *scripting.ScriptError
	if errors.As(err, &se) && se.Stack != "" {
		attrs = append(attrs, "stack", se.Stack)
	}
	if errors.Is(err, scripting.ErrTimeout) {
		attrs = append(attrs, "timeout", true)
	}
	if errors.Is(err, scripting.ErrStuck) {
		attrs = append(attrs, "stuck", true)
	}
	logger.Error("script handler failed", attrs...)
}
