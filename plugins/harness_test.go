package plugins

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	// fast is the debounce for changes made by one system call, where no
	// rescan can land in the middle of the change.
	fast = 20 * time.Millisecond
	// slow is the debounce for changes made of several steps whose
	// intermediate states must never be emitted: the steps are only
	// guaranteed to share one quiet period if the machine does not stall the
	// test for longer than this, and CI machines under -race do stall.
	slow = 250 * time.Millisecond

	waitLimit = 10 * time.Second
	sentinel  = "zz-sentinel.js"
)

// recorder collects emitted events; emit runs on Run's goroutine, the test
// reads from its own.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) add(ev Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

func (r *recorder) all() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

type harness struct {
	t    *testing.T
	dir  string
	rec  *recorder
	logs *logTee
}

// start runs a Watcher on dir until the test ends and waits for Synced.
func start(t *testing.T, dir string, opts Options) *harness {
	t.Helper()
	return startWith(t, dir, opts, nil)
}

// startWith is start with tweak applied to the Watcher before it runs.
func startWith(t *testing.T, dir string, opts Options, tweak func(*Watcher)) *harness {
	t.Helper()
	logs := &logTee{mu: new(sync.Mutex), msgs: new([]string),
		out: slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})}
	opts.Logger = slog.New(logs)
	w, err := NewWatcher(dir, opts)
	if err != nil {
		t.Fatalf("NewWatcher: %v", err)
	}
	if tweak != nil {
		tweak(w)
	}
	h := &harness{t: t, dir: dir, rec: &recorder{}, logs: logs}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, h.rec.add) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(waitLimit):
			t.Errorf("Run did not return after cancel")
		}
	})
	h.waitFor("Synced", func(evs []string) bool { return slices.Contains(evs, "Synced") })
	return h
}

// logTee writes log records to the test's output and keeps their messages.
type logTee struct {
	mu   *sync.Mutex
	msgs *[]string
	out  slog.Handler
}

func (l *logTee) Enabled(context.Context, slog.Level) bool { return true }

func (l *logTee) Handle(ctx context.Context, r slog.Record) error {
	l.mu.Lock()
	*l.msgs = append(*l.msgs, r.Level.String()+" "+r.Message)
	l.mu.Unlock()
	return l.out.Handle(ctx, r)
}

func (l *logTee) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logTee{mu: l.mu, msgs: l.msgs, out: l.out.WithAttrs(attrs)}
}

func (l *logTee) WithGroup(name string) slog.Handler {
	return &logTee{mu: l.mu, msgs: l.msgs, out: l.out.WithGroup(name)}
}

// waitLog polls until a record "LEVEL message" has been logged.
func (h *harness) waitLog(want string) {
	h.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		h.logs.mu.Lock()
		found := slices.Contains(*h.logs.msgs, want)
		h.logs.mu.Unlock()
		if found {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for the log record %q", want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitFor polls the recorded events, rendered by describe, until ok.
func (h *harness) waitFor(what string, ok func([]string) bool) {
	h.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		evs := describeAll(h.rec.all())
		if ok(evs) {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s; events:\n%s", what, strings.Join(evs, "\n"))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// settle proves the watcher has caught up with every change made so far: it
// adds a sentinel script and waits for it. Any rescan that sees the sentinel
// also sees everything done before it, so afterwards the events are final.
func (h *harness) settle() {
	h.t.Helper()
	content := fmt.Sprintf("// sentinel %d\n", time.Now().UnixNano())
	atomicWrite(h.t, filepath.Join(h.dir, sentinel), content)
	want := loaded(sentinel, content)
	h.waitFor(want, func(evs []string) bool { return slices.Contains(evs, want) })
}

// changes are the Loaded and Removed events after Synced, without the sentinel's.
func (h *harness) changes() []string {
	return h.after(func(ev string) bool { return !strings.HasPrefix(ev, "Settled ") })
}

// settled are the Settled events, without the sentinel's.
func (h *harness) settled() []string {
	return h.after(func(ev string) bool { return strings.HasPrefix(ev, "Settled ") })
}

func (h *harness) after(keep func(string) bool) []string {
	evs := describeAll(h.rec.all())
	i := slices.Index(evs, "Synced")
	out := []string{}
	for _, ev := range evs[i+1:] {
		if keep(ev) && !strings.Contains(ev, " "+sentinel+" ") && !strings.HasSuffix(ev, " "+sentinel) {
			out = append(out, ev)
		}
	}
	return out
}

func describe(ev Event) string {
	switch ev.Kind {
	case Loaded:
		return fmt.Sprintf("Loaded %s %s", ev.Source.Name, ev.Source.Hash)
	case Removed:
		return "Removed " + ev.Source.Name
	case Synced:
		return "Synced"
	case Settled:
		return fmt.Sprintf("Settled %s %s", ev.Source.Name, ev.Source.Hash)
	}
	return fmt.Sprintf("unknown kind %d", ev.Kind)
}

func describeAll(evs []Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = describe(ev)
	}
	return out
}

func loaded(name, content string) string {
	return fmt.Sprintf("Loaded %s %s", name, hashContent([]byte(content)))
}

func removed(name string) string { return "Removed " + name }

func settled(name, content string) string {
	return fmt.Sprintf("Settled %s %s", name, hashContent([]byte(content)))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// atomicWrite saves the way most editors do: a hidden temporary file in the
// same folder, renamed over the target.
func atomicWrite(t *testing.T, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp123")
	writeFile(t, tmp, content)
	mustDo(t, os.Rename(tmp, path))
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
