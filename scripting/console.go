package scripting

import (
	"context"
	"log/slog"
	"strings"

	"github.com/dop251/goja"
)

// The console and log globals write to the script's logger (already tagged script=<name>).
// console.* joins its arguments like Node; log.*(msg, fields) turns fields into attributes of
// the group fieldsGroup.

// fieldsGroup holds the attributes of log.*(msg, fields): `attrs.replicas=3` in text logs,
// "attrs":{"replicas":3} in JSON.
const fieldsGroup = "attrs"

var logLevels = []struct {
	name  string
	level slog.Level
}{
	{"debug", slog.LevelDebug},
	{"info", slog.LevelInfo},
	{"warn", slog.LevelWarn},
	{"error", slog.LevelError},
}

func (s *instance) newConsole() (*goja.Object, error) {
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

func (s *instance) newLog() (*goja.Object, error) {
	log := s.rt.NewObject()
	for _, l := range logLevels {
		if err := log.Set(l.name, s.logFunc(l.level)); err != nil {
			return nil, err
		}
	}
	return log, nil
}

func (s *instance) consoleFunc(level slog.Level) func(goja.FunctionCall) goja.Value {
	what := "console." + strings.ToLower(level.String())
	return func(call goja.FunctionCall) goja.Value {
		defer s.guard("console")
		if !s.log.Enabled(context.Background(), level) {
			return goja.Undefined()
		}
		b := s.budget(what)
		parts := make([]string, len(call.Arguments))
		for i, a := range call.Arguments {
			parts[i] = s.format(b, a)
		}
		s.log.LogAttrs(context.Background(), level, strings.Join(parts, " "))
		return goja.Undefined()
	}
}

func (s *instance) logFunc(level slog.Level) func(goja.FunctionCall) goja.Value {
	what := "log." + strings.ToLower(level.String())
	return func(call goja.FunctionCall) goja.Value {
		defer s.guard("log")
		if !s.log.Enabled(context.Background(), level) {
			return goja.Undefined()
		}
		b := s.budget(what)
		msg := s.format(b, call.Argument(0))
		// The fields go in a group of their own: a script cannot forge or duplicate the
		// attributes the runner writes (time, level, msg, script, version, handler, ...).
		s.log.Log(context.Background(), level, msg, fieldsGroup, slog.GroupValue(s.logFields(b, call.Argument(1))...))
		return goja.Undefined()
	}
}

// logFields flattens a fields object into attributes, keeping the script's key order. The
// message and the fields together are one value for the limits.
func (s *instance) logFields(b *budget, v goja.Value) []slog.Attr {
	obj, ok := v.(*goja.Object)
	if !ok {
		if isMissing(v) {
			return nil
		}
		return []slog.Attr{slog.Any("fields", b.export(v, 0))}
	}
	keys := obj.Keys()
	b.addItems(int64(len(keys)), "fields")
	attrs := make([]slog.Attr, 0, len(keys))
	for _, k := range keys {
		b.addChars(len(k))
		attrs = append(attrs, slog.Any(k, b.export(obj.Get(k), 1)))
	}
	return attrs
}

// format renders one console argument: strings as they are, objects as JSON when they have a
// JSON form, anything else as String() would; charged to b.
func (s *instance) format(b *budget, v goja.Value) string {
	if v == nil {
		return "undefined"
	}
	if isMissing(v) {
		return v.String()
	}
	if isString(v) {
		b.addString(v)
		return v.String()
	}
	if obj, ok := v.(*goja.Object); ok && isFunction(obj) {
		return v.String()
	}
	str := s.describe(v)
	b.addChars(len(str))
	return str
}
