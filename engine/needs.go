package engine

import (
	"slices"
	"sort"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine/internal/health"
	"github.com/jsinformer/jsinformer/engine/internal/memguard"
	"github.com/jsinformer/jsinformer/engine/internal/version"
)

// Which informers the live versions need, and the engine's side of their health (package
// engine/internal/health: what the runner says when one fails or recovers, and whether the
// runner is ready).

// ErrNotReady is wrapped by Ready's error.
var ErrNotReady = health.ErrNotReady

// needs records which informers each live version needs and whether it has synced. The loader
// writes it; readiness probes, metrics, the informers' health reports, the memory guard and
// the debug views read it.
type needs struct {
	mu        sync.Mutex
	byVersion map[*loaded]need
}

type need struct {
	script    string
	keys      []dynamicinformer.Key
	informers []cache.SharedIndexInformer // by key; set once subscribed
	since     time.Time                   // when the version began to sync
	synced    bool
}

func newNeeds() *needs { return &needs{byVersion: map[*loaded]need{}} }

func (n *needs) add(v *loaded, targets []version.Target) {
	keys := make([]dynamicinformer.Key, len(targets))
	for i, t := range targets {
		keys[i] = t.Key
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.byVersion[v] = need{script: v.ver.Script(), keys: keys, since: time.Now()}
}

// subscribed records v's informers, for the state API.
func (n *needs) subscribed(v *loaded, subs []*version.Subscription) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if nd, ok := n.byVersion[v]; ok {
		nd.informers = make([]cache.SharedIndexInformer, len(subs))
		for i, sub := range subs {
			nd.informers[i] = sub.Handle.Informer()
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

func (n *needs) synced(v *loaded) {
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

func (n *needs) remove(v *loaded) {
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

// syncing lists the live versions that have not synced, for readiness.
func (n *needs) syncing() []health.Syncing {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []health.Syncing
	for _, nd := range n.byVersion {
		if !nd.synced {
			out = append(out, health.Syncing{Script: nd.script, Since: nd.since})
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
func (e *Engine) Ready() error { return e.health.Ready() }

// onHealth logs an informer's health transition with the scripts it affects. Called on the
// informer's goroutines.
func (e *Engine) onHealth(ev dynamicinformer.HealthEvent) { e.health.Report(ev) }

// newHealth is the engine's readiness and informer reports (package engine/internal/health),
// read from the live versions' needs.
func (e *Engine) newHealth() *health.Health {
	return health.New(health.Config{UnhealthyAfter: e.cfg.UnhealthyAfter, Logger: e.logger,
		Loaded: e.readyOnce.Load, Informers: e.factory.Health,
		Scripts: e.needs.scripts, InUse: e.needs.inUse, Syncing: e.needs.syncing, Changed: e.book.Bump})
}

// versions lists the live versions (syncing, current, or draining not yet removed), sorted by
// script name, the serving one of a script first.
func (n *needs) versions() []*loaded {
	n.mu.Lock()
	out := make([]*loaded, 0, len(n.byVersion))
	for v := range n.byVersion {
		out = append(out, v)
	}
	n.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].ver.Script() != out[j].ver.Script() {
			return out[i].ver.Script() < out[j].ver.Script()
		}
		return out[i].ver.CurrentState() > out[j].ver.CurrentState() // current before syncing
	})
	return out
}
