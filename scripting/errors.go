package scripting

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinels wrapped by *ScriptError; inspect with errors.Is.
var (
	// ErrTimeout: the call ran past Options.Timeout and was interrupted.
	ErrTimeout = errors.New("timeout")
	// ErrInterrupted: Script.Interrupt was called; the script will not run again.
	ErrInterrupted = errors.New("script interrupted")
	// ErrInvalidDefinition: the exported definition does not follow the script contract.
	ErrInvalidDefinition = errors.New("invalid definition")
	// ErrSyntax: the source could not be transformed or compiled.
	ErrSyntax = errors.New("syntax error")
	// ErrPanic: Go code called by the script panicked; the panic was recovered.
	ErrPanic = errors.New("panic")
	// ErrStuck: the call did not stop within Options.Grace of its timeout or of Interrupt
	// (a Go built-in the interrupt cannot reach was running); its runtime was abandoned.
	ErrStuck = errors.New("call stuck")
)

// ScriptError is every error that comes from a script: syntax errors, invalid definitions,
// uncaught exceptions, rejected promises, timeouts, interrupts and recovered panics. Positions
// refer to the original source (before the TypeScript/ESM transform); zero means unknown.
type ScriptError struct {
	File    string
	Line    int
	Column  int
	Message string
	// Stack is the JS stack, one "at function (file:line:col)" per line, when there is one.
	Stack string
	// Err is the cause: one of the sentinels above, or the Go error a binding threw
	// (for example a Kubernetes API status error), or nil for a plain JS exception.
	Err error
}

func (e *ScriptError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
			if e.Column > 0 {
				b.WriteString(":" + strconv.Itoa(e.Column))
			}
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

func (e *ScriptError) Unwrap() error { return e.Err }

// invalidf builds the validation error for the definition key at line (0 when unknown).
func invalidf(file string, line int, msg string) *ScriptError {
	return &ScriptError{File: file, Line: line, Message: msg, Err: ErrInvalidDefinition}
}
