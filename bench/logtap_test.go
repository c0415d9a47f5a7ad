package bench

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
)

// logTap is the engine's slog.Handler in benchmarks: it signals when a given script version
// has been reloaded, and keeps warnings and errors to explain a timeout. Handlers derived
// with WithAttrs share its state.
type logTap struct {
	state *tapState
	attrs []slog.Attr
}

type tapState struct {
	mu       sync.Mutex
	reloaded map[string]chan struct{} // version -> closed when "script reloaded" is logged
	problems []string
}

func newLogTap() *logTap {
	return &logTap{state: &tapState{reloaded: map[string]chan struct{}{}}}
}

// expectReload returns a channel closed when the engine logs "script reloaded" for version.
// Call it before the change that causes the reload.
func (h *logTap) expectReload(version string) <-chan struct{} {
	h.state.mu.Lock()
	defer h.state.mu.Unlock()
	ch := make(chan struct{})
	h.state.reloaded[version] = ch
	return ch
}

// problems is every warning and error logged so far, one per line.
func (h *logTap) problems() string {
	h.state.mu.Lock()
	defer h.state.mu.Unlock()
	return strings.Join(h.state.problems, "\n")
}

func (h *logTap) Enabled(_ context.Context, level slog.Level) bool { return level >= slog.LevelInfo }

func (h *logTap) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "script reloaded" && r.Level < slog.LevelWarn {
		return nil
	}
	attrs := map[string]string{}
	collect := func(a slog.Attr) bool { attrs[a.Key] = a.Value.Resolve().String(); return true }
	for _, a := range h.attrs {
		collect(a)
	}
	r.Attrs(collect)
	h.state.mu.Lock()
	defer h.state.mu.Unlock()
	if r.Level >= slog.LevelWarn {
		h.state.problems = append(h.state.problems, fmt.Sprintf("%s %s %v", r.Level, r.Message, attrs))
	}
	if ch, ok := h.state.reloaded[attrs["version"]]; ok && r.Message == "script reloaded" {
		close(ch)
		delete(h.state.reloaded, attrs["version"])
	}
	return nil
}

func (h *logTap) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logTap{state: h.state, attrs: append(append([]slog.Attr{}, h.attrs...), attrs...)}
}

// WithGroup is not used by the engine; grouped attributes are kept flat.
func (h *logTap) WithGroup(string) slog.Handler { return h }
