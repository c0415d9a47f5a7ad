// Package browsertest drives headless Chromium (Debian's chromium package) with chromedp for
// the web page's tests. A missing chromium fails the test with a message saying how to
// install it (`.ci/run` does), as a missing control plane does; it never skips.
//
// A Browser is one tab; its console errors and uncaught exceptions are collected by one
// goroutine that the test's cleanup stops and joins.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// ChromiumPath finds the browser: $CHROMIUM, else chromium on PATH.
func ChromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("the web page tests need Chromium and found none on PATH: apt-get install chromium " +
			"(.ci/run does it), or set CHROMIUM to the browser's path")
	}
	return p
}

// Browser is one headless Chromium tab with its console errors collected.
type Browser struct {
	ctx    context.Context // the tab's chromedp context
	mu     sync.Mutex
	errors []string
}

// New starts Chromium with a fresh profile; it stops with the test.
func New(t *testing.T) *Browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(ChromiumPath(t)),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("enable-precise-memory-info", true),
		chromedp.WindowSize(1280, 900),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(cancelAlloc)
	b := &Browser{ctx: ctx}
	// Starting Chromium on a loaded machine can take a while; the first Run starts it (and
	// must not carry a timeout: that would stop the browser with it).
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }()
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("start chromium: %v", err)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("chromium did not start within 90s")
	}
	messages := chromedp.Console(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				b.record(m.String() + " " + m.URL)
			}
		}
	})
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return b
}

func (b *Browser) record(msg string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.errors = append(b.errors, msg)
}

// ConsoleErrors returns the errors the page logged so far.
func (b *Browser) ConsoleErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}

// Do runs actions with a generous deadline.
func (b *Browser) Do(t *testing.T, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Eval evaluates expr with a deadline.
func Eval[T any](b *Browser, expr string) (T, error) {
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](expr))
}

// WaitJS evaluates expr (a JS expression) until it is true, and returns how long that took.
func (b *Browser) WaitJS(t *testing.T, what, expr string, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	deadline := start.Add(within)
	var last error
	for {
		ok, err := Eval[bool](b, expr)
		last = err
		if err == nil && ok {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			body, _ := Eval[string](b, `document.querySelector("main").innerText.slice(0, 3000)`)
			t.Fatalf("%s: not within %s (last error %v); the page shows:\n%s", what, within, last, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Screenshot saves the page as name.png in $SCREENSHOTS (make screenshots: docs/screenshots),
// else in the test's temporary directory.
func (b *Browser) Screenshot(t *testing.T, name string) {
	t.Helper()
	dir := os.Getenv("SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(fmt.Errorf("save screenshot: %w", err))
	}
	t.Logf("screenshot %s", path)
}
