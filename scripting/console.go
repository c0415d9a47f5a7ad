package scripting

import (
	"context"
	"log/slog"
	"strings"

	"github.com/dop251/goja"
)

// The console and log globals write to the script's logger (already tagged script=<name>).
// console.* joins its arguments like Node; log.*(msg, fields) turns fields into attributes.

var logLevels = []struct {
	name  string
	level slog.Level
}{
	{"debug", slog.LevelDebug},
	{"info", slog.LevelInfo},
	{"warn", slog.LevelWarn},
	{"error", slog.LevelError},
}

func (s *Script) newConsole() (*goja.Object, error) {
	console := s.rt.NewObject()
	if err := console.Set("log", s.consoleFunc(slog.LevelInfo)); err != nil {
		return nil, err
	}
	for _, l := range logLevels {
		if err := console.Set(l.name, s.consoleFunc(l.level)); err != nil {
			return nil, err
		}
	}
	return console, nil
}

func (s *Script) newLog() (*goja.Object, error) {
	log := s.rt.NewObject()
	for _, l := range logLevels {
		if err := log.Set(l.name, s.logFunc(l.level)); err != nil {
			return nil, err
		}
	}
	return log, nil
}

func (s *Script) consoleFunc(level slog.Level) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		defer s.guard("console")
		if !s.log.Enabled(context.Background(), level) {
			return goja.Undefined()
		}
		parts := make([]string, len(call.Arguments))
		for i, a := range call.Arguments {
			parts[i] = s.format(a)
		}
		s.log.LogAttrs(context.Background(), level, strings.Join(parts, " "))
		return goja.Undefined()
	}
}

func (s *Script) logFunc(level slog.Level) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		defer s.guard("log")
		if !s.log.Enabled(context.Background(), level) {
			return goja.Undefined()
		}
		msg := s.format(call.Argument(0))
		s.log.LogAttrs(context.Background(), level, msg, s.logFields(call.Argument(1))...)
		return goja.Undefined()
	}
}

// logFields flattens a fields object into attributes, keeping the script's key order.
func (s *Script) logFields(v goja.Value) []slog.Attr {
	obj, ok := v.(*goja.Object)
	if !ok {
		if isMissing(v) {
			return nil
		}
		return []slog.Attr{slog.Any("fields", exportValue(v))}
	}
	keys := obj.Keys()
	attrs := make([]slog.Attr, 0, len(keys))
	for _, k := range keys {
		attrs = append(attrs, slog.Any(k, exportValue(obj.Get(k))))
	}
	return attrs
}

// format renders one console argument: strings as they are, objects as JSON when they have a
// JSON form, anything else as String() would.
func (s *Script) format(v goja.Value) string {
	if v == nil {
		return "undefined"
	}
	if isMissing(v) {
		return v.String()
	}
	if str, ok := v.Export().(string); ok {
		return str
	}
	if obj, ok := v.(*goja.Object); ok && isFunction(obj) {
		return v.String()
	}
	return s.describe(v)
}
