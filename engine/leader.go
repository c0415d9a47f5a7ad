package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Leader election: with Config.LeaderElection, the runner is a hot standby until it holds a
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
var ErrLeadershipLost = errors.New("leadership lost")

func (l *LeaderElection) setDefaults() error {
	if l.Name == "" || l.Namespace == "" || l.Identity == "" {
		return errors.New("configure leader election: name, namespace and identity are required")
	}
	l.LeaseDuration = orDefault(l.LeaseDuration, 15*time.Second)
	l.RenewDeadline = orDefault(l.RenewDeadline, 10*time.Second)
	l.RetryPeriod = orDefault(l.RetryPeriod, 2*time.Second)
	if l.RenewDeadline >= l.LeaseDuration || l.RetryPeriod >= l.RenewDeadline {
		return fmt.Errorf("configure leader election: want retry period (%s) < renew deadline (%s) < lease duration (%s)",
			l.RetryPeriod, l.RenewDeadline, l.LeaseDuration)
	}
	return nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// leadership is this runner's standing. leading is set when the elector reports it leads and
// cleared when it stops; valid additionally requires the last renewal to be within the renew
// deadline, so a runner cut off from the API server stops acting before a standby may take the
// Lease (LeaseDuration after the last renewal), whether or not client-go has noticed yet.
// A nil *leadership (no leader election) is always valid.
type leadership struct {
	cfg     LeaderElection
	elector *leaderelection.LeaderElector
	leading atomic.Bool
	holder  atomic.Pointer[string] // the leader last observed, for the state API
	changes chan bool              // to the loader: true when leading starts, false when it stops
}

func (l *leadership) valid() bool {
	if l == nil {
		return true
	}
	// Check passes whenever the observed holder is another: IsLeader rules that out first.
	return l.leading.Load() && l.elector.IsLeader() && l.elector.Check(l.cfg.RenewDeadline-l.cfg.LeaseDuration) == nil
}

// newLeadership builds the elector; it contacts nothing.
func (e *Engine) newLeadership(cfg LeaderElection) (*leadership, error) {
	restCfg := rest.CopyConfig(e.cfg.RESTConfig)
	restCfg.Timeout = cfg.RenewDeadline // a hung request must not outlive a renewal attempt
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return nil, fmt.Errorf("create leader election client: %w", err)
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, cfg.Namespace, cfg.Name, nil, client.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: cfg.Identity})
	if err != nil {
		return nil, fmt.Errorf("create lease lock: %w", err)
	}
	l := &leadership{cfg: cfg, changes: make(chan bool, 2)}
	l.elector, err = leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: cfg.LeaseDuration, RenewDeadline: cfg.RenewDeadline, RetryPeriod: cfg.RetryPeriod,
		ReleaseOnCancel: true, Name: cfg.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { l.leading.Store(true); l.changes <- true },
			OnStoppedLeading: func() {
				if l.leading.Swap(false) {
					l.changes <- false
				}
			},
			OnNewLeader: func(identity string) { e.onNewLeader(cfg.Identity, identity) },
		},
	})
	if err != nil {
		return nil, fmt.Errorf("create leader elector: %w", err)
	}
	return l, nil
}

func (e *Engine) onNewLeader(self, leader string) {
	e.lead.holder.Store(&leader)
	e.book.Bump()
	if leader != self {
		e.logger.Info("standing by", "leader", leader, "identity", self)
	}
}

// runElection runs the elector until ctx ends, then releases the Lease if held. Started by
// Run, which waits for it after its scripts have stopped.
func (e *Engine) runElection(ctx context.Context) (wait func()) {
	e.logger.Info("waiting to lead", "lease", e.lead.cfg.Namespace+"/"+e.lead.cfg.Name, "identity", e.lead.cfg.Identity)
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.lead.elector.Run(ctx)
	}()
	return func() { <-done }
}

// onLeading is the loader's side of a leadership change. Starting to lead reloads every
// script so that its new version replays the cache; stopping is ErrLeadershipLost.
func (e *Engine) onLeading(leading bool) error {
	e.book.Bump()
	if !leading {
		e.stats.leader.Set(0)
		e.logger.Error("stopped leading: handler calls and writes stopped; exiting so that a new leader takes over", "identity", e.lead.cfg.Identity)
		return ErrLeadershipLost
	}
	e.stats.leader.Set(1)
	e.logger.Info("became leader", "identity", e.lead.cfg.Identity, "scripts", len(e.plugins))
	for _, p := range e.plugins {
		if v := p.latest(); v != nil {
			e.loadOrReport(v.src, "") // not load: the same content must load again here
		}
	}
	return nil
}

// checkFence is the loader's periodic check that a leader still holds a valid Lease.
func (e *Engine) checkFence() error {
	if e.lead.leading.Load() && !e.lead.valid() {
		e.lead.leading.Store(false)
		return e.onLeading(false)
	}
	return nil
}

// fencedTransport refuses every request but reads while the runner does not lead: the last
// line of defence, should a script call survive a lost Lease.
type fencedTransport struct {
	next  http.RoundTripper
	valid func() bool // the leadership's, or the shard member's
}

func (t fencedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet && !t.valid() {
		return nil, fmt.Errorf("refuse %s %s: %w: this runner does not hold its Lease", req.Method, req.URL.Path, ErrNotLeader)
	}
	return t.next.RoundTrip(req)
}

// ErrNotLeader is wrapped by the error of a write refused because this runner does not lead.
var ErrNotLeader = errors.New("not the leader")
