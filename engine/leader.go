package engine

import (
	"context"
	"time"

	"github.com/jsinformer/jsinformer/engine/internal/leader"
)

// Leader election (the elector, its fence and defaults are package engine/internal/leader):
// with Config.LeaderElection, the runner is a hot standby until it holds a
// coordination.k8s.io/v1 Lease. A standby loads and validates its scripts and keeps their
// informers synced, but its versions call no handler, start no reconcile and its client sends
// no write. On becoming leader every script is loaded again, so every version sees the cached
// objects as initial adds, as after a reload. Losing the lease stops handler calls and writes
// at once and makes Run return ErrLeadershipLost.

// LeaderElection configures leader election; the durations mean what they mean for
// kube-controller-manager.
type LeaderElection struct {
	// Namespace and Name of the Lease.
	Namespace, Name string
	// Identity of this replica in the Lease; unique per process.
	Identity string
	// LeaseDuration is how long standbys wait after the last renewal before taking over;
	// default 15s. RenewDeadline is how long the leader keeps trying to renew before it stops
	// leading; default 10s, and less than LeaseDuration. RetryPeriod is how often renewal and
	// acquisition are tried; default 2s.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// ErrLeadershipLost is returned by Run when the runner stopped leading without being asked to.
var ErrLeadershipLost = leader.ErrLost

// ErrNotLeader is wrapped by the error of a write refused because this runner does not lead
// (leader.Fence refuses it at the transport).
var ErrNotLeader = leader.ErrNotLeader

// setDefaults fills and checks l (leader.Config.WithDefaults).
func (l *LeaderElection) setDefaults() error {
	c, err := leader.Config(*l).WithDefaults()
	*l = LeaderElection(c)
	return err
}

// leadership is this runner's standing (package engine/internal/leader); a nil *leadership
// (no leader election) is always valid.
type leadership = leader.Elector

// newLeadership builds the elector; it contacts nothing.
func (e *Engine) newLeadership(cfg LeaderElection) (*leadership, error) {
	return leader.New(e.cfg.RESTConfig, leader.Config(cfg), func(holder string) { e.onNewLeader(cfg.Identity, holder) })
}

func (e *Engine) onNewLeader(self, holder string) {
	e.book.Bump()
	if holder != self {
		e.logger.Info("standing by", "leader", holder, "identity", self)
	}
}

// runElection runs the elector until ctx ends, then releases the Lease if held. Started by
// Run, which waits for it after its scripts have stopped.
func (e *Engine) runElection(ctx context.Context) (wait func()) {
	cfg := e.lead.Config()
	e.logger.Info("waiting to lead", "lease", cfg.Namespace+"/"+cfg.Name, "identity", cfg.Identity)
	return e.lead.Start(ctx)
}

// onLeading is the loader's side of a leadership change. Starting to lead reloads every
// script so that its new version replays the cache; stopping is ErrLeadershipLost.
func (e *Engine) onLeading(leading bool) error {
	e.book.Bump()
	if !leading {
		e.stats.Leading(false)
		e.logger.Error("stopped leading: handler calls and writes stopped; exiting so that a new leader takes over", "identity", e.lead.Config().Identity)
		return ErrLeadershipLost
	}
	e.stats.Leading(true)
	e.logger.Info("became leader", "identity", e.lead.Config().Identity, "scripts", len(e.plugins))
	for _, p := range e.plugins {
		if v := p.latest(); v != nil {
			e.loadOrReport(v.src, "") // not load: the same content must load again here
		}
	}
	return nil
}

// checkFence is the loader's periodic check that a leader still holds a valid Lease.
func (e *Engine) checkFence() error {
	if e.lead.Fenced() {
		return e.onLeading(false)
	}
	return nil
}
