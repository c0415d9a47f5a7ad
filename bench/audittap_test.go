package bench

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
)

// auditTap is the log handler of BenchmarkAudit's runner: it signals "ready", each script
// version's "script loaded" or "script reloaded", each "script unloaded", hands the latency
// script's "lat" lines to a probe, and keeps warnings and errors to explain a failure.
// Handlers derived with WithAttrs share its state.
type auditTap struct {
	p     *probe
	state *auditTapState
	attrs []slog.Attr
}

type auditTapState struct {
	mu        sync.Mutex
	ready     chan struct{}
	readyOnce sync.Once
	loaded    map[string]chan struct{} // version → closed when it is loaded or reloaded
	unloaded  map[string]chan struct{} // script → closed when it is unloaded
	problems  []string
}

func newAuditTap(p *probe) *auditTap {
	return &auditTap{p: p, state: &auditTapState{ready: make(chan struct{}),
		loaded: map[string]chan struct{}{}, unloaded: map[string]chan struct{}{}}}
}

// expectLoaded returns a channel closed when version (scriptVersion) is loaded or reloaded.
// Call it before the write that causes the load.
func (h *auditTap) expectLoaded(version string) <-chan struct{} {
	h.state.mu.Lock()
	defer h.state.mu.Unlock()
	ch := make(chan struct{})
	h.state.loaded[version] = ch
	return ch
}

// expectUnloaded returns a channel closed when script is unloaded. Call it before the removal.
func (h *auditTap) expectUnloaded(script string) <-chan struct{} {
	h.state.mu.Lock()
	defer h.state.mu.Unlock()
	ch := make(chan struct{})
	h.state.unloaded[script] = ch
	return ch
}

// problems is every warning and error logged so far, one per line.
func (h *auditTap) problems() string {
	h.state.mu.Lock()
	defer h.state.mu.Unlock()
	return strings.Join(h.state.problems, "\n")
}

func (h *auditTap) Enabled(_ context.Context, level slog.Level) bool { return level >= slog.LevelInfo }

func (h *auditTap) Handle(_ context.Context, r slog.Record) error {
	switch r.Message {
	case "ready":
		h.state.readyOnce.Do(func() { close(h.state.ready) })
		return nil
	case "lat":
		if name, t := stampOf(r); t != "" && h.p != nil {
			h.p.handledBy(name, t)
		}
		return nil
	case "script loaded", "script reloaded", "script unloaded":
	default:
		if r.Level < slog.LevelWarn {
			return nil
		}
	}
	attrs := map[string]string{}
	collect := func(a slog.Attr) bool { attrs[a.Key] = a.Value.Resolve().String(); return true }
	for _, a := range h.attrs {
		collect(a)
	}
	r.Attrs(collect)
	h.state.mu.Lock()
	defer h.state.mu.Unlock()
	switch {
	case r.Level >= slog.LevelWarn:
		h.state.problems = append(h.state.problems, fmt.Sprintf("%s %s %v", r.Level, r.Message, attrs))
	case r.Message == "script unloaded":
		if ch, ok := h.state.unloaded[attrs["script"]]; ok {
			close(ch)
			delete(h.state.unloaded, attrs["script"])
		}
	default:
		if ch, ok := h.state.loaded[attrs["version"]]; ok {
			close(ch)
			delete(h.state.loaded, attrs["version"])
		}
	}
	return nil
}

func (h *auditTap) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &auditTap{p: h.p, state: h.state, attrs: append(append([]slog.Attr{}, h.attrs...), attrs...)}
}

// WithGroup is not used by the engine; grouped attributes are kept flat.
func (h *auditTap) WithGroup(string) slog.Handler { return h }
