package plugins

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Scan lists the plugins of dir once, as a Watcher finds them at its start (modules and test
// files left out), sorted by name. The Watcher's goroutine is Scan's own and has ended when it
// returns.
func Scan(ctx context.Context, dir string, opts Options) ([]Source, error) {
	w, err := NewWatcher(dir, opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var out []Source
	err = w.Run(ctx, func(ev Event) {
		switch ev.Kind {
		case Loaded:
			out = append(out, ev.Source)
		case Synced:
			cancel()
		}
	})
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", dir, err)
	}
	slices.SortFunc(out, func(a, b Source) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
