package jstest

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/dop251/goja"

	"github.com/jsinformer/jsinformer/permissions"
	"github.com/jsinformer/jsinformer/scripting"
)

// Options configure a run of test files.
type Options struct {
	// Timeout bounds each test, and a file's top-level code, on the real clock; default 60s.
	Timeout time.Duration
	// Output receives what test files print with console.*; default discards.
	Output io.Writer
	// QuietTimeout bounds, on the real clock, each wait of a harness for its plugin to be
	// done (a plugin that keeps writing fails the test after it); default 10s.
	QuietTimeout time.Duration
	// OnCall, when set, is told the permission each k8s call of a harnessed plugin used
	// (`runner test --permissions`); it may be called from several goroutines at once.
	OnCall func(permissions.Need)
}

// FileResult is the outcome of one test file.
type FileResult struct {
	File string `json:"file"`
	// Error: the file could not be run (a syntax error, a top-level throw); its tests did
	// not run.
	Error string       `json:"error,omitempty"`
	Tests []TestResult `json:"tests"`
	// Plugin: File is not a test file but a plugin of a test file's folder, and Error says
	// why it does not load (CheckPlugins).
	Plugin bool `json:"plugin,omitempty"`
}

// TestResult is the outcome of one test.
type TestResult struct {
	Name       string   `json:"name"`
	Status     string   `json:"status"` // passed, failed or skipped
	DurationMS float64  `json:"durationMs"`
	Failure    *Failure `json:"failure,omitempty"`
}

// Failure says why a test failed and where.
type Failure struct {
	Message string `json:"message"`
	// Expected, Received and Diff are set for a failed assertion; Diff when the values span
	// several lines.
	Expected string `json:"expected,omitempty"`
	Received string `json:"received,omitempty"`
	Diff     string `json:"diff,omitempty"`
	// File, Line and Column point at the failing statement in the test file.
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	Stack  string `json:"stack,omitempty"`
}

// Test statuses.
const (
	Passed  = "passed"
	Failed  = "failed"
	Skipped = "skipped"
)

// RunFile loads one test file and runs its tests in the order they were declared, each with
// the harnesses it creates, closed when it ends. The file runs in a runtime of its own, on
// the calling goroutine.
func RunFile(ctx context.Context, path string, opts Options) FileResult {
	if opts.Timeout <= 0 {
		opts.Timeout = time.Minute
	}
	if opts.Output == nil {
		opts.Output = io.Discard
	}
	if opts.QuietTimeout <= 0 {
		opts.QuietTimeout = 10 * time.Second
	}
	name := filepath.ToSlash(filepath.Clean(path))
	res := FileResult{File: name, Tests: []TestResult{}}
	src, err := os.ReadFile(path)
	if err != nil {
		res.Error = fmt.Sprintf("read test file: %v", err)
		return res
	}
	prg, err := scripting.Compile(name, src)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	f, err := newFileRun(ctx, name, filepath.Dir(path), prg, opts)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	defer f.closeHarnesses()
	if fail := f.load(); fail != nil {
		res.Error = fail.String()
		return res
	}
	for _, tc := range f.tests {
		res.Tests = append(res.Tests, f.run(tc))
	}
	return res
}

// String is a failure on one line: position and message.
func (fl *Failure) String() string {
	if fl.File == "" {
		return fl.Message
	}
	return fmt.Sprintf("%s:%d:%d: %s", fl.File, fl.Line, fl.Column, fl.Message)
}

// load runs the file's top-level code, which declares its tests.
func (f *fileRun) load() *Failure {
	stop := f.arm()
	defer stop()
	_, err := f.prg.RunModule(f.rt, f.require)
	if err != nil {
		return f.failure(err)
	}
	return nil
}

// run runs one test: the beforeEach hooks around it, the test, the afterEach hooks.
func (f *fileRun) run(tc *testCase) TestResult {
	if tc.skip {
		return TestResult{Name: tc.name, Status: Skipped}
	}
	start := time.Now()
	stop := f.arm()
	err := f.runHooks(tc.scope, true)
	if err == nil {
		err = f.call(tc.fn)
	}
	if after := f.runHooks(tc.scope, false); err == nil {
		err = after
	}
	stop()
	f.closeHarnesses()
	r := TestResult{Name: tc.name, Status: Passed, DurationMS: float64(time.Since(start).Microseconds()) / 1000}
	if err != nil {
		r.Status, r.Failure = Failed, f.failure(err)
	}
	return r
}

// runHooks runs the beforeEach hooks from the outermost scope in, or the afterEach hooks
// from the innermost out.
func (f *fileRun) runHooks(s *scope, before bool) error {
	var chain []*scope
	for ; s != nil; s = s.parent {
		chain = append([]*scope{s}, chain...)
	}
	if !before {
		for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
			chain[i], chain[j] = chain[j], chain[i]
		}
	}
	for _, s := range chain {
		hooks := s.after
		if before {
			hooks = s.before
		}
		for _, h := range hooks {
			if err := f.call(h); err != nil {
				return err
			}
		}
	}
	return nil
}

// call calls a test function; a returned promise must be settled by then (harness calls are
// synchronous, so awaiting them does).
func (f *fileRun) call(fn goja.Callable) error {
	v, err := fn(goja.Undefined())
	if err != nil {
		return err
	}
	p, ok := v.Export().(*goja.Promise)
	if !ok {
		return nil
	}
	switch p.State() {
	case goja.PromiseStateRejected:
		_, err := f.rethrow(goja.Undefined(), p.Result())
		return err
	case goja.PromiseStatePending:
		return fmt.Errorf("the test returned a promise that is still pending: only await harness calls and settled promises (there are no timers)")
	}
	return nil
}

// arm interrupts the runtime when the timeout passes; the returned func disarms it.
func (f *fileRun) arm() func() {
	t := time.AfterFunc(f.opts.Timeout, func() { f.rt.Interrupt(timeoutMark{}) })
	return func() {
		t.Stop()
		f.rt.ClearInterrupt()
	}
}

type timeoutMark struct{}
