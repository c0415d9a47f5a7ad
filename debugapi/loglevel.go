package debugapi

import (
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

// levelOverride changes the runner's log level for a while, then puts back the level it had
// before the first change. Safe for concurrent use.
type levelOverride struct {
	v      *slog.LevelVar
	logger *slog.Logger

	mu    sync.Mutex
	orig  slog.Level
	timer *time.Timer // non-nil while an override is in force
}

func newLevelOverride(v *slog.LevelVar, logger *slog.Logger) *levelOverride {
	return &levelOverride{v: v, logger: logger}
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
	if o.timer == nil {
		o.orig = o.v.Level()
	} else {
		o.timer.Stop()
	}
	o.v.Set(level)
	o.timer = time.AfterFunc(d, o.revert)
	o.logger.Warn("log level changed through the debug API", "level", level.String(), "for", d.String(), "then", o.orig.String())
	return fmt.Sprintf("log level %s for %s, then %s again", level, d, o.orig), nil
}

func (o *levelOverride) revert() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.timer == nil {
		return
	}
	o.timer = nil
	o.v.Set(o.orig)
	o.logger.Info("log level back after the debug API's change", "level", o.orig.String())
}

// stop cancels a pending revert and puts the level back now.
func (o *levelOverride) stop() {
	o.mu.Lock()
	t := o.timer
	o.mu.Unlock()
	if t != nil && t.Stop() {
		o.revert()
	}
}
