package health

import (
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/permissions"
)

// ErrNotReady is wrapped by Ready's error.
var ErrNotReady = errors.New("not ready")

// Syncing is a live version that has not synced yet.
type Syncing struct {
	Script string
	Since  time.Time // when it began to sync
}

// Config is what the health reads; every func is required and must be safe for concurrent
// use.
type Config struct {
	// UnhealthyAfter is how long an informer in use may fail, or a version may sync, before
	// Ready says no.
	UnhealthyAfter time.Duration
	Logger         *slog.Logger
	// Loaded reports that the initial scripts have loaded (or failed): not ready before.
	Loaded func() bool
	// Informers is every informer's health (dynamicinformer.Factory.Health).
	Informers func() []dynamicinformer.Health
	// Scripts names the scripts whose live versions use key, sorted.
	Scripts func(key dynamicinformer.Key) []string
	// InUse is the set of keys some live version needs.
	InUse func() map[dynamicinformer.Key]bool
	// Syncing lists the live versions that have not synced.
	Syncing func() []Syncing
	// Changed is told of every informer transition (the state API's change signal).
	Changed func()
}

// Health answers readiness and reports informer transitions from Config.
type Health struct{ cfg Config }

// New returns the health of cfg.
func New(cfg Config) *Health { return &Health{cfg: cfg} }

// Ready reports whether the runner serves its scripts: nil once the initial scripts have
// loaded, as long as no informer a loaded script needs has been failing for longer than
// UnhealthyAfter and no version has been syncing for longer than that. Otherwise the error,
// wrapping ErrNotReady, names the informers and scripts concerned, sorted.
func (h *Health) Ready() error {
	if !h.cfg.Loaded() {
		return fmt.Errorf("%w: the initial scripts are still loading", ErrNotReady)
	}
	now := time.Now()
	limit := h.cfg.UnhealthyAfter
	var problems []string
	for _, s := range h.cfg.Syncing() {
		if now.Sub(s.Since) > limit {
			problems = append(problems, fmt.Sprintf("script %s has not synced after %s", s.Script, now.Sub(s.Since).Round(time.Second)))
		}
	}
	used := h.cfg.InUse()
	for _, inf := range h.cfg.Informers() {
		if used[inf.Key] && !inf.Healthy && now.Sub(inf.FailingSince) > limit {
			problems = append(problems, fmt.Sprintf("informer %s cannot list/watch for %s (scripts %s): %s",
				inf.Key, now.Sub(inf.FailingSince).Round(time.Second), strings.Join(h.cfg.Scripts(inf.Key), ", "), inf.LastError))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	sort.Strings(problems)
	return fmt.Errorf("%w: %s", ErrNotReady, strings.Join(problems, "; "))
}

// Report logs an informer's health transition with the scripts it affects: a WARN when it
// fails and while it still fails, an INFO when it recovers.
func (h *Health) Report(ev dynamicinformer.HealthEvent) {
	attrs := []any{
		"resource", dynamicinformer.FormatGVR(ev.Key.GVR), "namespace", ev.Key.Namespace,
		"label_selector", ev.Key.LabelSelector, "field_selector", ev.Key.FieldSelector,
		"scripts", strings.Join(h.cfg.Scripts(ev.Key), ","),
	}
	h.cfg.Changed()
	if apierrors.IsForbidden(ev.Err) {
		h.reportForbidden(ev, attrs)
		return
	}
	switch ev.Kind {
	case dynamicinformer.Failing:
		h.cfg.Logger.Warn("informer cannot list/watch; its scripts see no changes until it recovers", append(attrs, "error", ev.Err.Error())...)
	case dynamicinformer.StillFailing:
		h.cfg.Logger.Warn("informer still cannot list/watch", append(attrs, "down_for", time.Since(ev.Since).Round(time.Second).String(), "error", ev.Err.Error())...)
	case dynamicinformer.Recovered:
		h.cfg.Logger.Info("informer recovered", append(attrs, "down_for", ev.Down.Round(time.Millisecond).String(), "relisted", ev.Relisted)...)
	}
}

// reportForbidden reports an informer the runner may not list or watch: one WARN with the
// verb refused and the rule to add; the reminders while it stays refused are DEBUG, since the
// answer only changes when someone grants it (the informer retries, with Backoff.MaxRejected,
// and its scripts start once it lists; status and /readyz show it meanwhile).
func (h *Health) reportForbidden(ev dynamicinformer.HealthEvent, attrs []any) {
	need := permissions.Need{Group: ev.Key.GVR.Group, Resource: ev.Key.GVR.Resource, Verb: "list,watch", Namespace: ev.Key.Namespace}
	attrs = append(attrs, "verb", refusedVerb(ev.Err), "grant", need.Rule(), "error", ev.Err.Error())
	switch ev.Kind {
	case dynamicinformer.Failing:
		h.cfg.Logger.Warn("informer may not list/watch: the runner lacks a permission; its scripts start once it is granted", attrs...)
	case dynamicinformer.StillFailing:
		h.cfg.Logger.Debug("informer still may not list/watch", append(attrs, "down_for", time.Since(ev.Since).Round(time.Second).String())...)
	}
}

// refusedVerb is the verb a Forbidden names ("... cannot list resource ..."); "list" when it
// names none: an informer lists before it watches.
func refusedVerb(err error) string {
	_, rest, ok := strings.Cut(err.Error(), "cannot ")
	if verb, _, found := strings.Cut(rest, " "); ok && found && verb != "" {
		return verb
	}
	return "list"
}
