package main

import (
	"io"
	"log/slog"
)

func newLogger(w io.Writer, format string, verbosity int) *slog.Logger {
	level := slog.LevelInfo
	if verbosity > 0 {
		level = slog.LevelDebug
	}
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
