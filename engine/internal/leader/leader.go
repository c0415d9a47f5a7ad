package leader

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Config names the Lease and the timings; the durations mean what they mean for
// kube-controller-manager and must already be defaulted and ordered
// (RetryPeriod < RenewDeadline < LeaseDuration).
type Config struct {
	Namespace, Name, Identity                 string
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// Elector is this runner's standing. leading is set when client-go's elector reports it leads
// and cleared when it stops; Valid additionally requires the last renewal to be within the
// renew deadline, so a runner cut off from the API server stops acting before a standby may
// take the Lease (LeaseDuration after the last renewal), whether or not client-go has noticed
// yet. A nil *Elector (no leader election) is always valid.
type Elector struct {
	cfg     Config
	elector *leaderelection.LeaderElector
	leading atomic.Bool
	holder  atomic.Pointer[string] // the leader last observed
	changes chan bool              // true when leading starts, false when it stops
}

// New builds the elector on restCfg; it contacts nothing. onNewLeader is called on the
// elector's goroutine with each leader it observes (this runner's identity included).
func New(restCfg *rest.Config, cfg Config, onNewLeader func(leader string)) (*Elector, error) {
	restCfg = rest.CopyConfig(restCfg)
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
	l := &Elector{cfg: cfg, changes: make(chan bool, 2)}
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
			OnNewLeader: func(identity string) {
				l.holder.Store(&identity)
				onNewLeader(identity)
			},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("create leader elector: %w", err)
	}
	return l, nil
}

// Config is the configuration the elector was built with.
func (l *Elector) Config() Config { return l.cfg }

// Valid reports whether this runner may act: it leads and renewed within the renew deadline.
// Always true on a nil *Elector.
func (l *Elector) Valid() bool {
	if l == nil {
		return true
	}
	// Check passes whenever the observed holder is another: IsLeader rules that out first.
	return l.leading.Load() && l.elector.IsLeader() && l.elector.Check(l.cfg.RenewDeadline-l.cfg.LeaseDuration) == nil
}

// Leading reports whether the elector last said this runner leads (Valid also checks the
// renewal's age).
func (l *Elector) Leading() bool { return l.leading.Load() }

// Fenced reports whether this runner still counts as leading but may no longer act (its last
// renewal is too old), and if so marks it as no longer leading: its owner then stops, as when
// the elector says so.
func (l *Elector) Fenced() bool {
	if l.leading.Load() && !l.Valid() {
		l.leading.Store(false)
		return true
	}
	return false
}

// Holder is the leader last observed; "" before any.
func (l *Elector) Holder() string {
	if h := l.holder.Load(); h != nil {
		return *h
	}
	return ""
}

// Changes receives true when leading starts and false when it stops (once per term). Its
// owner (the engine's loader) must keep reading it while Run runs.
func (l *Elector) Changes() <-chan bool { return l.changes }

// Run runs the elector until ctx ends, then releases the Lease if held.
func (l *Elector) Run(ctx context.Context) { l.elector.Run(ctx) }

// Start runs the elector on a goroutine of its own until ctx ends, then releases the Lease if
// held; wait returns once that goroutine has. Its caller owns the goroutine through wait.
func (l *Elector) Start(ctx context.Context) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.Run(ctx)
	}()
	return func() { <-done }
}
