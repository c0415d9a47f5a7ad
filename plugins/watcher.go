package plugins

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultDebounce is the quiet period used when Options.Debounce is not set. It only has to
// cover the steps of one save made back to back (a truncate and its write, a temporary file
// and its rename, a ConfigMap volume's symlink swap: microseconds apart); a writer that pauses
// longer is what the empty-file hold and the grace period are for (see the package doc), so it
// is kept short: it is part of every reload's latency.
const DefaultDebounce = 10 * time.Millisecond

// Log keys used by this package.
const (
	keyScript  = "script"
	keyVersion = "version"
	keyError   = "error"
	keyDir     = "dir"
	keyPath    = "path"
	keyOp      = "op"
)

// Options configures a Watcher. The zero value is usable.
type Options struct {
	// Logger receives warnings (unreadable files, watch errors) and debug
	// traces; nil discards them.
	Logger *slog.Logger
	// Debounce is how long the folder must stay quiet before it is rescanned;
	// zero or negative means DefaultDebounce.
	Debounce time.Duration
	// Grace is how long a script must stay unchanged after a change before its Settled event
	// is emitted; zero or negative means DefaultGrace.
	Grace time.Duration
	// Extensions are the script file types, with or without the leading dot,
	// matched case-insensitively; empty means .js .mjs .cjs .ts .mts .cts.
	Extensions []string
	// Imports, when set, tells which files each script imports, so that imported files are
	// modules rather than plugins and saving one reloads its importers (see graph.go). Nil
	// makes only the files under lib/ folders modules.
	Imports ImportsFunc
}

// rootPoll is how often a scripts folder that was removed is looked for.
const rootPoll = time.Second

// Watcher turns a scripts folder into a stream of plugin Events.
type Watcher struct {
	dir  string
	opts Options
	log  *slog.Logger
	// Seams for tests: how files are read, how often a removed folder is polled.
	readFile func(string) ([]byte, error)
	rootPoll time.Duration
}

// NewWatcher checks that dir is an existing folder and prepares to watch it.
// Nothing is read or watched until Run. A missing dir yields an error that
// matches fs.ErrNotExist.
func NewWatcher(dir string, opts Options) (*Watcher, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open scripts folder %s: %w", dir, err)
	}
	info, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("open scripts folder %s: %w", dir, fs.ErrNotExist)
	case err != nil:
		return nil, fmt.Errorf("open scripts folder: %w", err)
	case !info.IsDir():
		return nil, fmt.Errorf("open scripts folder %s: not a directory", dir)
	}
	return &Watcher{dir: abs, opts: normalize(opts), log: logger(opts.Logger), readFile: os.ReadFile, rootPoll: rootPoll}, nil
}

func normalize(opts Options) Options {
	if opts.Debounce <= 0 {
		opts.Debounce = DefaultDebounce
	}
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	opts.Extensions = normalizeExtensions(opts.Extensions)
	return opts
}

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// Dir is the absolute path of the scripts folder.
func (w *Watcher) Dir() string { return w.dir }

// Run scans the folder, emits its scripts and Synced, then emits changes
// until ctx is done, when it returns nil. emit is called on Run's goroutine
// only, one event at a time. An error is returned only if watching cannot
// start or the first scan cannot read the folder.
func (w *Watcher) Run(ctx context.Context, emit func(Event)) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("start file watcher: %w", err)
	}
	defer fw.Close()
	if err := fw.Add(w.dir); err != nil {
		return fmt.Errorf("watch scripts folder %s: %w", w.dir, err)
	}
	deb := newDebouncer(w.opts.Debounce)
	defer deb.stop()
	r := w.newRun(fw, deb, emit)
	defer r.settle.stop()
	if err := r.initial(); err != nil {
		return err
	}
	return r.loop(ctx)
}
