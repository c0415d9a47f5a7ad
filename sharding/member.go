package sharding

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Config configures a member; the durations mean what they mean for leader election.
type Config struct {
	// Name of the ring (the Leases' prefix and RingLabel), Identity of this member: unique
	// per process.
	Name, Identity string
	// LeaseDuration is how long after its last renewal another member's Lease counts as held;
	// RenewDeadline how long after its own last renewal a member keeps handling keys
	// (less than LeaseDuration); RetryPeriod how often it renews and reads the ring.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// DrainTimeout bounds the wait for the calls in flight on keys the member loses; past it
	// they are abandoned (the engine's handler timeout has interrupted them by then) and the
	// member records that it drained.
	DrainTimeout time.Duration
	Logger       *slog.Logger
	// Planner, when set, makes each ring's plan: the ring's lowest member calls it and writes
	// the plan to its Lease, and every member moves to a ring only with that plan (View).
	// Placer gives a plan's owner function; nil: rendezvous over the ring, plan or not.
	// Partitioned caches plan an even share of the namespaces for each member and place a key
	// "ns/name" with its namespace, on the member caching its object.
	Planner Planner
	Placer  Placer
	// Replan, when positive, is how often the lowest member asks the Planner again for the
	// ring it planned (plan.go).
	Replan time.Duration
	// AwaitListed, set when caches are partitioned, holds a member's narrowing to a new ring
	// until every other member of that ring has recorded (Listed) that its caches hold the
	// keys it owns there: a key's old owner keeps handling it until its new owner watches it,
	// so no event falls between the two (an object deleted in between would otherwise be
	// seen by neither). The engine calls Member.SetListed.
	AwaitListed bool
}

// Clock is the member's time: the real one, or a fake in tests.
type Clock interface{ Now() time.Time }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// Member is one replica's membership in a ring. Its Run goroutine renews the replica's Lease,
// reads the others' and moves keys; the engine asks Begin or Handles from any goroutine.
type Member struct {
	cfg    Config
	store  LeaseStore
	clock  Clock
	logger *slog.Logger
	lease  string // this member's Lease name

	mu        sync.Mutex
	own       *Lease    // nil until created
	lastRenew time.Time // clock time before the last successful write of own
	// attempted are the renew times of the writes tried since the last one that succeeded
	// (at most maxAttempted): any of them may have been stored, its reply lost.
	attempted []time.Time
	lastErr   error
	active    View   // the ring keys are handled by; empty before joining
	narrowed  []View // rings observed since active: a key is handled only while it is ours in each
	target    View   // the newest ring observed
	// plan is the plan this member made as its ring's lowest member, written on renewal;
	// unplanned is set while the ring observed differs from target but has no plan yet.
	plan      ringPlan
	plannedAt time.Time // when plan was made or last confirmed (Config.Replan)
	warned    string    // the last plan warning logged (warnOnceLocked)
	unplanned bool
	// leaving is set by Leave; left is closed once the member has handed its keys over.
	leaving   bool
	left      chan struct{}
	leftOnce  sync.Once
	drainFrom time.Time
	abandoned bool   // the drain to target timed out (logged once)
	published string // the Drained fingerprint last written
	// held is set while the narrowing to target waits for the others' Listed
	// (Config.AwaitListed); listed is the fingerprint SetListed gave, written on renewal.
	held     bool
	listed   string
	inflight map[string]int
	seen     map[string]seenLease
	// nextExpiry is when the first Lease of another member expires unless renewed, so that Run
	// looks again then rather than up to a retry period later.
	nextExpiry time.Time
	gains      []Gain
	gen        uint64
	released   bool
	// expired is set when the renew deadline passed (fenceLocked): from then on the member
	// handles nothing, even once a late renewal succeeds, until it has joined the ring again
	// as a new member would (gain clears it): the calls it refused meanwhile were dropped, and
	// only the replay of every key it then gains delivers them.
	expired bool
	// named are the keys Accept refused, with when (named.go).
	named     map[string]time.Time
	namedFull bool
	wake      chan struct{} // cap 1: the last call a drain waited for ended
	notify    chan struct{} // cap 1: TakeGains has something
	retargets chan struct{} // cap 1: Target changed
}

type seenLease struct {
	version string
	at      time.Time // when this member first saw that version
}

// New returns a member of store's ring; it contacts nothing until Run.
func New(cfg Config, store LeaseStore, clock Clock) *Member {
	if clock == nil {
		clock = realClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Member{cfg: cfg, store: store, clock: clock, logger: cfg.Logger, lease: LeaseName(cfg.Name, cfg.Identity),
		inflight: map[string]int{}, seen: map[string]seenLease{}, named: map[string]time.Time{},
		wake: make(chan struct{}, 1), notify: make(chan struct{}, 1), retargets: make(chan struct{}, 1), left: make(chan struct{})}
}

// Identity is this member's.
func (m *Member) Identity() string { return m.cfg.Identity }

// Handles reports whether this member handles key now: its Lease is valid and the key is its
// own in the ring it acts on and in every ring it has seen since.
func (m *Member) Handles(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.handlesLocked(key, m.clock.Now())
}

func (m *Member) handlesLocked(key string, now time.Time) bool {
	if !m.validLocked(now) || m.active.Owner(key) != m.cfg.Identity {
		return false
	}
	for _, r := range m.narrowed {
		if r.Owner(key) != m.cfg.Identity {
			return false
		}
	}
	return true
}

// Begin starts a call on key if this member handles it; end must be called when the call is
// over. A key that moves away waits for its calls to end before the member records it drained.
func (m *Member) Begin(key string) (end func(), ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.handlesLocked(key, m.clock.Now()) {
		return nil, false
	}
	m.inflight[key]++
	return func() { m.end(key) }, true
}

// end ends a call on key. It wakes Run only when this call was the last one a drain waited
// for: every wake is a tick (a List and a Lease update), so waking on every call would renew
// the Lease once per handler call under load instead of once per retry period.
func (m *Member) end(key string) {
	m.mu.Lock()
	if m.inflight[key]--; m.inflight[key] <= 0 {
		delete(m.inflight, key)
	}
	drained := m.drainWaitsLocked() && m.drainedLocked(m.clock.Now())
	m.mu.Unlock()
	if drained {
		select {
		case m.wake <- struct{}{}:
		default:
		}
	}
}

// drainWaitsLocked reports whether a move waits to record its target ring drained. Called
// with mu held.
func (m *Member) drainWaitsLocked() bool {
	return m.movingLocked() && !m.held && m.published != m.target.Fingerprint()
}

// Valid reports whether the member's last renewal is within the renew deadline: false before
// it joined, after it released its Lease, and once it cannot renew.
func (m *Member) Valid() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.validLocked(m.clock.Now())
}

func (m *Member) validLocked(now time.Time) bool {
	if m.own == nil || m.released || m.expired {
		return false
	}
	if now.Sub(m.lastRenew) >= m.cfg.RenewDeadline {
		m.fenceLocked(now)
		return false
	}
	return true
}

// fenceLocked stops the member handling anything: its renew deadline passed, so the others may
// count its Lease as expired and take its keys. It forgets the rings it acted on, so that it
// joins again as a new member once it can renew: it records the ring it then sees drained
// (after its calls in flight ended), starts its keys once the others have recorded the same
// ring, and gains every one of them. Called with mu held.
func (m *Member) fenceLocked(now time.Time) {
	m.expired = true
	m.active, m.narrowed, m.target, m.held = View{}, nil, View{}, false
	m.logger.Warn("shard lease not renewed within the renew deadline: handling no key until the ring is joined again",
		"lease", m.lease, "last_renew", m.lastRenew, "ago", now.Sub(m.lastRenew).Round(time.Millisecond))
}

// Owner is the member key belongs to in the ring this member acts on ("" before it joined);
// for inspection: during a move the key may be handled by neither.
func (m *Member) Owner(key string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.active.Owner(key)
}

// Gain is one ring change this member applied: Has reports the keys it gained.
type Gain struct {
	Generation uint64
	// Named are the gained keys that events named (Accept) while another member handled them,
	// in no order: an object deleted meanwhile, a key without an object.
	Named          []string
	self           string
	before         View
	beforeNarrowed []View
	after          View
}

// Has reports whether key is one the member gained in this change: its own in the new ring,
// not handled before.
func (g Gain) Has(key string) bool {
	if g.after.Owner(key) != g.self {
		return false
	}
	if g.before.Owner(key) != g.self {
		return true
	}
	for _, r := range g.beforeNarrowed {
		if r.Owner(key) != g.self {
			return true
		}
	}
	return false
}

// SetListed records that this member's caches hold the keys it owns in the ring of
// fingerprint fp and those it handles now, their watches started (Config.AwaitListed); it is
// written to the Lease on the next renewal.
func (m *Member) SetListed(fp string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.listed = fp
}

// Target is the newest ring this member observed, with its plan, which it moves to (empty
// before its first observation, and while fenced): the ring whose keys it will handle once
// the others have drained to it. Partitioned caches start listing what it gives them here,
// before the gain. The View's Ring is the member's own: not to be modified.
func (m *Member) Target() View {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.target
}

// Active is the ring this member acts on, with its plan (empty before it joined and while
// fenced). The View's Ring is the member's own: not to be modified.
func (m *Member) Active() View {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.active
}

// Targets signals when Target changed.
func (m *Member) Targets() <-chan struct{} { return m.retargets }

// Gains signals when TakeGains has something.
func (m *Member) Gains() <-chan struct{} { return m.notify }

// TakeGains returns the ring changes applied since the last call, oldest first.
func (m *Member) TakeGains() []Gain {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.gains
	m.gains = nil
	return out
}

// Status is a snapshot for the state API and metrics.
type Status struct {
	Identity, Lease string
	// Members is the ring this member acts on; Pending whether it is moving to another, or
	// has observed another whose plan it waits for.
	Members    []string
	Pending    bool
	Generation uint64
	Valid      bool
	LastRenew  time.Time
	// LastErr is why the last tick could not renew; nil once one did.
	LastErr error
}

// Status returns the member's standing.
func (m *Member) Status() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	return Status{Identity: m.cfg.Identity, Lease: m.lease, Members: slices.Clone(m.active.Ring),
		Pending: m.movingLocked() || m.unplanned, Generation: m.gen, Valid: m.validLocked(m.clock.Now()), LastRenew: m.lastRenew,
		LastErr: m.lastErr}
}

// Run renews the Lease and moves keys until ctx ends, then releases the Lease: the caller
// cancels ctx only once nothing of this replica can still handle a key. A member that cannot
// renew within the renew deadline (the API server is down, or out of reach) handles nothing
// but keeps trying, and joins the ring again once it can.
func (m *Member) Run(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			m.release()
			return
		case <-timer.C:
		case <-m.wake:
		}
		pending := m.tick(ctx)
		m.Valid() // the fence is up from the renew deadline on, asked or not
		timer.Reset(m.nextTick(pending))
	}
}

// nextTick is how long Run waits before the next tick: a retry period; a quarter of one while a
// move is in progress, so that keys are not left unhandled long; and no later than just after
// the next expiry of another member's Lease, so that a crashed member's keys move promptly.
func (m *Member) nextTick(pending bool) time.Duration {
	next := m.cfg.RetryPeriod
	if pending {
		next = max(m.cfg.RetryPeriod/4, 50*time.Millisecond)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.nextExpiry.IsZero() {
		if until := m.nextExpiry.Sub(m.clock.Now()) + 10*time.Millisecond; until > 0 && until < next {
			next = until
		}
	}
	return next
}

// release stops handling and deletes the Lease, so the others take its keys at once.
func (m *Member) release() {
	m.mu.Lock()
	m.released = true
	own := m.own
	m.mu.Unlock()
	if own == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.cfg.RenewDeadline)
	defer cancel()
	if err := m.store.Delete(ctx, own.Name, own.ResourceVersion); err != nil && !apierrors.IsNotFound(err) {
		m.logger.Warn("release shard lease; the others take its keys once it expires", "lease", own.Name, "error", err.Error())
		return
	}
	m.logger.Info("released shard lease", "lease", own.Name)
}
