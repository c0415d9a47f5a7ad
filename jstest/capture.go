package jstest

import (
	"context"
	"log/slog"
	"runtime"
	"strings"
	"sync"
)

// capture is the slog.Handler an Offline engine logs to: it keeps what the script logged
// (console and log, told apart by the calling function) and the engine's reports of the
// script's failures (records with "handler" and "error"), for h.logs and h.errors. Safe for
// concurrent use: the engine logs from its goroutines.
type capture struct {
	attrs []slog.Attr
	root  *captured
}

type captured struct {
	mu     sync.Mutex
	logs   []entry
	errors []entry
}

// entry is one record as a test sees it: level, message and attributes.
type entry map[string]any

func newCapture() *capture { return &capture{root: &captured{}} }

func (c *capture) Enabled(context.Context, slog.Level) bool { return true }

func (c *capture) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &capture{attrs: append(append([]slog.Attr{}, c.attrs...), attrs...), root: c.root}
}

func (c *capture) WithGroup(string) slog.Handler { return c }

func (c *capture) Handle(_ context.Context, r slog.Record) error {
	e := entry{"level": strings.ToLower(r.Level.String()), "message": r.Message}
	add := func(a slog.Attr) bool {
		switch {
		case a.Key == "attrs" && a.Value.Kind() == slog.KindGroup: // what the script logged, all of it
			for _, g := range a.Value.Group() {
				e[g.Key] = g.Value.Resolve().Any()
			}
		case a.Key != "script" && a.Key != "version":
			e[a.Key] = a.Value.Resolve().Any()
		}
		return true
	}
	for _, a := range c.attrs {
		add(a)
	}
	r.Attrs(add)
	switch {
	case fromScript(r.PC):
		c.root.add(&c.root.logs, e)
	case e["handler"] != nil && e["error"] != nil:
		c.root.add(&c.root.errors, e)
	}
	return nil
}

func (c *captured) add(list *[]entry, e entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	*list = append(*list, e)
}

func (c *captured) snapshot(list *[]entry) []entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]entry{}, *list...)
}

// fromScript reports a record logged by a script's console or log global: its caller is a
// function of scripting's consoleModule or logModule (scripting/console.go).
func fromScript(pc uintptr) bool {
	if pc == 0 {
		return false
	}
	frame, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	return strings.Contains(frame.Function, "/scripting.(*consoleModule).") ||
		strings.Contains(frame.Function, "/scripting.(*logModule).")
}
