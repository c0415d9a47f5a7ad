package engine

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine/internal/memguard"
)

// Watch health: which informers the loaded scripts need, what the runner says when one of
// them fails or recovers, and whether the runner is ready.

// ErrNotReady is wrapped by Ready's error.
var ErrNotReady = errors.New("not ready")

// needs records which informers each live version needs and whether it has synced. The loader
// writes it; readiness probes, metrics and the informers' health reports read it.
type needs struct {
	mu        sync.Mutex
	byVersion map[*version]need
}

type need struct {
	script    string
	keys      []dynamicinformer.Key
	informers []cache.SharedIndexInformer // by key; set once subscribed
	since     time.Time                   // when the version began to sync
	synced    bool
}

func newNeeds() *needs { return &needs{byVersion: map[*version]need{}} }

func (n *needs) add(v *version, targets []target) {
	keys := make([]dynamicinformer.Key, len(targets))
	for i, t := range targets {
		keys[i] = t.key
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.byVersion[v] = need{script: v.name, keys: keys, since: time.Now()}
}

// subscribed records v's informers, for the state API.
func (n *needs) subscribed(v *version, subs []*subscription) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if nd, ok := n.byVersion[v]; ok {
		nd.informers = make([]cache.SharedIndexInformer, len(subs))
		for i, sub := range subs {
			nd.informers[i] = sub.informer.Informer()
		}
		n.byVersion[v] = nd
	}
}

// informers maps the keys live versions use to their informers.
func (n *needs) informers() map[dynamicinformer.Key]cache.SharedIndexInformer {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := map[dynamicinformer.Key]cache.SharedIndexInformer{}
	for _, nd := range n.byVersion {
		for i, inf := range nd.informers {
			out[nd.keys[i]] = inf
		}
	}
	return out
}

func (n *needs) synced(v *version) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if nd, ok := n.byVersion[v]; ok {
		nd.synced = true
		n.byVersion[v] = nd
	}
}

// serving lists the versions that have synced and serve, for the memory guard.
func (n *needs) serving() []memguard.Version {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []memguard.Version
	for v, nd := range n.byVersion {
		if nd.synced {
			out = append(out, v)
		}
	}
	return out
}

func (n *needs) remove(v *version) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.byVersion, v)
}

// scripts names the scripts whose live versions use key, sorted.
func (n *needs) scripts(key dynamicinformer.Key) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, nd := range n.byVersion {
		if slices.Contains(nd.keys, key) && !slices.Contains(out, nd.script) {
			out = append(out, nd.script)
		}
	}
	sort.Strings(out)
	return out
}

// unsynced lists the scripts with a version still syncing after limit.
func (n *needs) unsynced(now time.Time, limit time.Duration) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, nd := range n.byVersion {
		if !nd.synced && now.Sub(nd.since) > limit {
			out = append(out, fmt.Sprintf("script %s has not synced after %s", nd.script, now.Sub(nd.since).Round(time.Second)))
		}
	}
	return out
}

// inUse is the set of keys some live version needs.
func (n *needs) inUse() map[dynamicinformer.Key]bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := map[dynamicinformer.Key]bool{}
	for _, nd := range n.byVersion {
		for _, k := range nd.keys {
			out[k] = true
		}
	}
	return out
}

// Ready reports whether the runner serves its scripts: nil once the initial scripts have
// loaded, as long as no informer a loaded script needs has been failing for longer than
// Config.UnhealthyAfter and no version has been syncing for longer than that. Otherwise the
// error, wrapping ErrNotReady, names the informers and scripts concerned. Safe for concurrent
// use.
func (e *Engine) Ready() error {
	if !e.readyOnce.Load() {
		return fmt.Errorf("%w: the initial scripts are still loading", ErrNotReady)
	}
	now := time.Now()
	problems := e.needs.unsynced(now, e.cfg.UnhealthyAfter)
	used := e.needs.inUse()
	for _, h := range e.factory.Health() {
		if used[h.Key] && !h.Healthy && now.Sub(h.FailingSince) > e.cfg.UnhealthyAfter {
			problems = append(problems, fmt.Sprintf("informer %s cannot list/watch for %s (scripts %s): %s",
				h.Key, now.Sub(h.FailingSince).Round(time.Second), strings.Join(e.needs.scripts(h.Key), ", "), h.LastError))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	sort.Strings(problems)
	return fmt.Errorf("%w: %s", ErrNotReady, strings.Join(problems, "; "))
}

// onHealth logs an informer's health transition with the scripts it affects. Called on the
// informer's goroutines.
func (e *Engine) onHealth(ev dynamicinformer.HealthEvent) {
	attrs := []any{
		"resource", dynamicinformer.FormatGVR(ev.Key.GVR), "namespace", ev.Key.Namespace,
		"label_selector", ev.Key.LabelSelector, "field_selector", ev.Key.FieldSelector,
		"scripts", strings.Join(e.needs.scripts(ev.Key), ","),
	}
	e.book.Bump()
	switch ev.Kind {
	case dynamicinformer.Failing:
		e.logger.Warn("informer cannot list/watch; its scripts see no changes until it recovers", append(attrs, "error", ev.Err.Error())...)
	case dynamicinformer.StillFailing:
		e.logger.Warn("informer still cannot list/watch", append(attrs, "down_for", time.Since(ev.Since).Round(time.Second).String(), "error", ev.Err.Error())...)
	case dynamicinformer.Recovered:
		e.logger.Info("informer recovered", append(attrs, "down_for", ev.Down.Round(time.Millisecond).String(), "relisted", ev.Relisted)...)
	}
}
