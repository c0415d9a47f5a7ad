package shardgate

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/sharding"
	"github.com/jsinformer/jsinformer/status"
)

// Ring is what the gate asks of this replica's ring member; *sharding.Member implements it.
type Ring interface {
	Begin(key string) (end func(), ok bool)
	Handles(key string) bool
	Accept(key string) bool
	Valid() bool
	Owner(key string) string
	Identity() string
	Gains() <-chan struct{}
	TakeGains() []sharding.Gain
	Target() sharding.View
	Active() sharding.View
	Targets() <-chan struct{}
	Status() sharding.Status
	SetListed(fp string)
	Leave(ctx context.Context) bool
	Run(ctx context.Context)
}

// Config names this replica's Lease and the ring's timings (as for leader election, already
// defaulted), and how long a key's calls in flight may delay its move.
type Config struct {
	Namespace, Name, Identity                 string
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	DrainTimeout                              time.Duration
	Logger                                    *slog.Logger
	// Plan makes the ring's lowest member plan each ring from the namespaces, and every
	// member place keys by that plan (shardrange.Plan): set with partitioned caches.
	Plan bool
	// Replan is how often the lowest member plans its ring again (sharding.Config.Replan).
	Replan time.Duration
	// Namespaces, when set, replaces the namespaces listed from the API server for the plan:
	// tests fix them to know the plan in advance.
	Namespaces func(context.Context) ([]string, error)
	// AwaitListed holds each narrowing until the keys' new owners have listed them
	// (sharding.Config.AwaitListed): set with partitioned caches.
	AwaitListed bool
}

// Gate is this replica's standing in the ring, as the engine asks it before each call. A nil
// *Gate is an unsharded runner: every key is its own, it gains nothing and has no status.
type Gate struct {
	ring      Ring
	namespace string // of the Leases, for the state API
	logger    *slog.Logger
}

// New builds this replica's ring member on the cluster restCfg reaches; it contacts nothing.
func New(restCfg *rest.Config, cfg Config) (*Gate, error) {
	restCfg = rest.CopyConfig(restCfg)
	restCfg.Timeout = cfg.RenewDeadline // a hung request must not outlive a renewal attempt
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return nil, fmt.Errorf("create shard lease client: %w", err)
	}
	store := sharding.APILeases{Client: client.CoordinationV1(), Namespace: cfg.Namespace, Ring: cfg.Name}
	mcfg := sharding.Config{Name: cfg.Name, Identity: cfg.Identity,
		LeaseDuration: cfg.LeaseDuration, RenewDeadline: cfg.RenewDeadline, RetryPeriod: cfg.RetryPeriod,
		DrainTimeout: cfg.DrainTimeout, Logger: cfg.Logger, AwaitListed: cfg.AwaitListed}
	if cfg.Plan {
		namespaces := cfg.Namespaces
		if namespaces == nil {
			namespaces = Namespaces(client)
		}
		mcfg.Planner, mcfg.Placer, mcfg.Replan = Planner(namespaces, cfg.Logger), Placer, cfg.Replan
	}
	member := sharding.New(mcfg, store, nil)
	return On(member, cfg.Namespace, cfg.Logger), nil
}

// On is the gate of ring, whose Leases live in namespace.
func On(ring Ring, namespace string, logger *slog.Logger) *Gate {
	return &Gate{ring: ring, namespace: namespace, logger: logger}
}

// Begin starts a call on key: false when another replica owns key (or this one lost its
// Lease). end is called when the call is over, so that a key moves only once its calls ended.
func (g *Gate) Begin(key string) (end func(), ok bool) {
	if g == nil {
		return func() {}, true
	}
	return g.ring.Begin(key)
}

// Handles reports whether this replica queues key: always when unsharded.
func (g *Gate) Handles(key string) bool { return g == nil || g.ring.Handles(key) }

// Accept reports whether this replica queues reconcile key, as Handles; when it does not,
// the key is remembered, and named by the gain that gives it to this replica.
func (g *Gate) Accept(key string) bool { return g == nil || g.ring.Accept(key) }

// Valid reports whether this replica still holds its Lease; for the write fence.
func (g *Gate) Valid() bool { return g == nil || g.ring.Valid() }

// Owner is the member key belongs to ("" before joining); for inspection.
func (g *Gate) Owner(key string) string {
	if g == nil {
		return ""
	}
	return g.ring.Owner(key)
}

// OtherOwner is the member key belongs to when that is another replica, else "".
func (g *Gate) OtherOwner(key string) string {
	if g == nil {
		return ""
	}
	if owner := g.ring.Owner(key); owner != g.ring.Identity() {
		return owner
	}
	return ""
}

// Gains signals when TakeGains has something; nil (never) when unsharded.
func (g *Gate) Gains() <-chan struct{} {
	if g == nil {
		return nil
	}
	return g.ring.Gains()
}

// Targets signals when Target changed; nil (never) when unsharded.
func (g *Gate) Targets() <-chan struct{} {
	if g == nil {
		return nil
	}
	return g.ring.Targets()
}

// Target is the newest ring this replica observed, with its plan, which it moves to
// (sharding.Member.Target), and this replica's identity; empty when unsharded, before the
// first observation and while fenced.
func (g *Gate) Target() (view sharding.View, self string) {
	if g == nil {
		return sharding.View{}, ""
	}
	return g.ring.Target(), g.ring.Identity()
}

// Active is the ring this replica acts on, with its plan (empty before it joined, while
// fenced, or unsharded).
func (g *Gate) Active() sharding.View {
	if g == nil {
		return sharding.View{}
	}
	return g.ring.Active()
}

// SetListed records that this replica's caches hold the keys of the ring of fingerprint fp,
// and those it handles now (sharding.Member.SetListed).
func (g *Gate) SetListed(fp string) {
	if g != nil {
		g.ring.SetListed(fp)
	}
}

// Leave hands this replica's keys over before it stops (sharding.Member.Leave): it returns
// once the others have listed what they take and this replica handles nothing, or at ctx's
// end, reporting whether the hand-over finished. Unsharded, there is nothing to hand over.
func (g *Gate) Leave(ctx context.Context) bool { return g == nil || g.ring.Leave(ctx) }

// TakeGains returns whether a key is one this replica gained in the ring changes applied
// since the last call (nil when it gained nothing), and the gained keys that events named
// while another replica handled them (Accept), which no cached object may map to.
func (g *Gate) TakeGains() (gained func(key string) bool, named []string) {
	if g == nil {
		return nil, nil
	}
	gains := g.ring.TakeGains()
	if len(gains) == 0 {
		return nil, nil
	}
	for _, gain := range gains {
		named = append(named, gain.Named...)
	}
	return func(key string) bool {
		for _, gain := range gains {
			if gain.Has(key) {
				return true
			}
		}
		return false
	}, named
}

// Start runs the member on a goroutine of its own until stop, which cancels it and returns
// once it has returned (and released its Lease): its owner calls stop only once nothing of
// this replica can still handle a key. Unsharded, stop does nothing.
func (g *Gate) Start() (stop func()) {
	if g == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	st := g.ring.Status()
	g.logger.Info("joining shard ring", "lease", g.namespace+"/"+st.Lease, "identity", st.Identity)
	go func() {
		defer close(done)
		g.ring.Run(ctx)
	}()
	return func() { cancel(); <-done }
}

// Status is this replica's standing for the state API; nil when unsharded.
func (g *Gate) Status() *status.ShardStatus {
	if g == nil {
		return nil
	}
	st := g.ring.Status()
	return &status.ShardStatus{Identity: st.Identity, Lease: g.namespace + "/" + st.Lease, Members: st.Members,
		Pending: st.Pending, Generation: st.Generation, Valid: st.Valid}
}

// Members is the ring this replica acts on, for the shard metrics.
func (g *Gate) Members() (members int, generation uint64) {
	st := g.ring.Status()
	return len(st.Members), st.Generation
}

// Pending reports whether this replica is moving to another ring, or waits for the plan of one
// it observed (sharding.Status.Pending).
func (g *Gate) Pending() bool { return g.ring.Status().Pending }
