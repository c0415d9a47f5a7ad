package debugapi

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
)

const (
	// DefaultLogLevelFor is how long a log-level change lasts when no duration is given.
	DefaultLogLevelFor = 10 * time.Minute
	// MaxLogLevelFor bounds a log-level change: a forgotten debug level must not last forever.
	MaxLogLevelFor = 24 * time.Hour
)

// errStopped: the server is stopping; no new override may start a timer nobody would stop.
var errStopped = errors.New("the debug API is stopping: the log level is not changed")

// levelOverride changes the runner's log level for a while, then puts back the level it had
// before the first change. Safe for concurrent use.
//
// Each override has a generation: a timer that fired just as a newer override was set (its
// revert waiting for mu) finds a newer generation and does nothing, so it cannot cancel that
// override. After stop, set refuses: a request still in flight when the server stops must not
// leave a timer running after Serve has returned.
type levelOverride struct {
	v      *slog.LevelVar
	logger *slog.Logger
	// afterFunc is time.AfterFunc; tests replace it to fire timers when they choose.
	afterFunc func(d time.Duration, f func()) interface{ Stop() bool }

	mu      sync.Mutex
	orig    slog.Level
	timer   interface{ Stop() bool } // non-nil while an override is in force
	gen     uint64                   // the override in force (or the last one)
	stopped bool
}

func newLevelOverride(v *slog.LevelVar, logger *slog.Logger) *levelOverride {
	return &levelOverride{v: v, logger: logger, afterFunc: func(d time.Duration, f func()) interface{ Stop() bool } {
		return time.AfterFunc(d, f)
	}}
}

func (o *levelOverride) set(name string, d time.Duration) (string, error) {
	if o.v == nil {
		return "", fmt.Errorf("this runner's log level cannot be changed")
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(strings.ToUpper(name))); err != nil {
		return "", fmt.Errorf("unknown log level %q: want debug, info, warn or error", name)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stopped {
		return "", errStopped
	}
	if o.timer == nil {
		o.orig = o.v.Level()
	} else {
		o.timer.Stop()
	}
	o.gen++
	gen := o.gen
	o.v.Set(level)
	o.timer = o.afterFunc(d, func() { o.revert(gen) })
	o.logger.Warn("log level changed through the debug API", "level", level.String(), "for", d.String(), "then", o.orig.String())
	return fmt.Sprintf("log level %s for %s, then %s again", level, d, o.orig), nil
}

// revert ends override gen, unless a newer one replaced it or none is in force.
func (o *levelOverride) revert(gen uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.timer == nil || gen != o.gen {
		return
	}
	o.timer = nil
	o.v.Set(o.orig)
	o.logger.Info("log level back after the debug API's change", "level", o.orig.String())
}

// stop cancels a pending revert, puts the level back now, and refuses later changes.
func (o *levelOverride) stop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stopped = true
	if o.timer == nil {
		return
	}
	o.timer.Stop()
	o.timer = nil
	o.v.Set(o.orig)
}
