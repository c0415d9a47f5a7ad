package scripting

import (
	"context"
	"log/slog"
	"strings"

	"github.com/dop251/goja"
)

// The console and log globals write to the script's logger (already tagged script=<name>).
// console.* joins its arguments like Node; log.*(msg, fields) turns fields into attributes of
// the group fieldsGroup. Each output is one value for the limits (limits.go). `runner test`
// tells a script's output from the engine's by the caller of the log call (jstest/capture.go
// matches consoleModule and logModule): those calls stay in these types' methods.

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

// consoleModule is the console global. Used only on the executor goroutine (env.go).
type consoleModule struct {
	*callEnv
	log *slog.Logger
}

func newConsole(env *callEnv, log *slog.Logger) *consoleModule {
	return &consoleModule{callEnv: env, log: log}
}

// exports is the console object: log, and one function per level.
func (c *consoleModule) exports() (*goja.Object, error) {
	console := c.rt.NewObject()
	if err := console.Set("log", c.printer(slog.LevelInfo)); err != nil {
		return nil, err
	}
	for _, l := range logLevels {
		if err := console.Set(l.name, c.printer(l.level)); err != nil {
			return nil, err
		}
	}
	return console, nil
}

// printer is console.<level>(...args): the arguments formatted and joined by spaces.
func (c *consoleModule) printer(level slog.Level) func(goja.FunctionCall) goja.Value {
	what := "console." + strings.ToLower(level.String())
	return func(call goja.FunctionCall) goja.Value {
		defer c.guard("console")
		if !c.log.Enabled(context.Background(), level) {
			return goja.Undefined()
		}
		b := c.budget(what)
		parts := make([]string, len(call.Arguments))
		for i, a := range call.Arguments {
			parts[i] = b.format(a)
		}
		c.log.LogAttrs(context.Background(), level, strings.Join(parts, " "))
		return goja.Undefined()
	}
}

// logModule is the log global. Used only on the executor goroutine (env.go).
type logModule struct {
	*callEnv
	log *slog.Logger
}

func newLog(env *callEnv, log *slog.Logger) *logModule {
	return &logModule{callEnv: env, log: log}
}

// exports is the log object: one function per level.
func (l *logModule) exports() (*goja.Object, error) {
	obj := l.rt.NewObject()
	for _, lv := range logLevels {
		if err := obj.Set(lv.name, l.logger(lv.level)); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

// logger is log.<level>(msg, fields).
func (l *logModule) logger(level slog.Level) func(goja.FunctionCall) goja.Value {
	what := "log." + strings.ToLower(level.String())
	return func(call goja.FunctionCall) goja.Value {
		defer l.guard("log")
		if !l.log.Enabled(context.Background(), level) {
			return goja.Undefined()
		}
		b := l.budget(what)
		msg := b.format(call.Argument(0))
		// The fields go in a group of their own: a script cannot forge or duplicate the
		// attributes the runner writes (time, level, msg, script, version, handler, ...).
		l.log.Log(context.Background(), level, msg, fieldsGroup, slog.GroupValue(b.logFields(call.Argument(1))...))
		return goja.Undefined()
	}
}

// logFields flattens a fields object into attributes, keeping the script's key order. The
// message and the fields together are one value for the limits.
func (b *budget) logFields(v goja.Value) []slog.Attr {
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
func (b *budget) format(v goja.Value) string {
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
	str := b.env.describe(v)
	b.addChars(len(str))
	return str
}
