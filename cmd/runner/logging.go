package main

import (
	"io"
	"log/slog"
)

func newLogger(w io.Writer, format string, verbosity int) *slog.Logger {
	return newLoggerWithLevel(w, format, levelFor(verbosity))
}

// newLoggerWithLevel logs at level, which may change while the runner runs (the debug API's
// log-level action).
func newLoggerWithLevel(w io.Writer, format string, level *slog.LevelVar) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func levelFor(verbosity int) *slog.LevelVar {
	level := &slog.LevelVar{}
	if verbosity > 0 {
		level.Set(slog.LevelDebug)
	}
	return level
}
