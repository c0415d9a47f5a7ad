package permissions

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
)

// The runner checks itself: at start, on each reload and every Interval, it asks the API
// server whether it holds what each loaded script needs (SelfSubjectAccessReview, one per
// distinct permission, cached for Interval, at most MaxReviews per round) and reports what it
// lacks.

// DefaultInterval is how often the check runs again, and how long an answer is cached: an RBAC
// change is picked up within it.
const DefaultInterval = 30 * time.Second

// DefaultMaxReviews bounds the reviews of one round; the permissions left over are checked in
// the next rounds (the cache holds what was answered).
const DefaultMaxReviews = 200

// DefaultPause is the wait between rounds while reviews are left over.
const DefaultPause = time.Second

// Reviewer answers whether the runner may do what a need says.
type Reviewer interface {
	Allowed(ctx context.Context, n Need, namespace string) (bool, error)
}

// NewReviewer asks the API server with SelfSubjectAccessReviews, as the identity of cfg.
func NewReviewer(cfg *rest.Config) (Reviewer, error) {
	c, err := authorizationclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create authorization client: %w", err)
	}
	return ssar{c.SelfSubjectAccessReviews()}, nil
}

type ssar struct {
	c authorizationclient.SelfSubjectAccessReviewInterface
}

// Allowed reviews one need; namespace replaces an Own need's.
func (s ssar) Allowed(ctx context.Context, n Need, namespace string) (bool, error) {
	resource, sub, _ := cutSub(n.Resource)
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: n.Verb, Group: n.Group, Resource: resource,
			Subresource: sub, Namespace: namespace, Name: n.ResourceName}}}
	got, err := s.c.Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("review %s: %w", n, err)
	}
	return got.Status.Allowed, nil
}

func cutSub(resource string) (string, string, bool) {
	for i := range len(resource) {
		if resource[i] == '/' {
			return resource[:i], resource[i+1:], true
		}
	}
	return resource, "", false
}

// CheckerConfig configures a Checker.
type CheckerConfig struct {
	Reviewer Reviewer
	// Runner are the runner's own needs (Runner.Needs); OwnNamespace where its Own needs are.
	Runner       []Need
	OwnNamespace string
	Interval     time.Duration // zero: DefaultInterval
	MaxReviews   int           // zero: DefaultMaxReviews
	Pause        time.Duration // between rounds while reviews are left over; zero: DefaultPause
	Logger       *slog.Logger
	// Changed, when set, is called after a round changed what is missing.
	Changed func()
}

// Checker holds what each loaded script needs and what the runner lacks of it. Set and Remove
// are called by the loader; Run is the checking loop, on a goroutine its caller owns; Missing
// and Forbidden may be read from any goroutine.
type Checker struct {
	cfg     CheckerConfig
	trigger chan struct{}
	failing bool // the last review got no answer; Run's goroutine only

	mu        sync.Mutex
	scripts   map[string][]Need
	cache     map[Need]answer // by the need's permission (Script and Why cleared)
	missing   []Need
	forbidden []Forbidden
	checked   bool // the last report covered every need (Checked)
}

type answer struct {
	allowed bool
	at      time.Time
}

// NewChecker returns a Checker; nothing is checked until Run.
func NewChecker(cfg CheckerConfig) *Checker {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.MaxReviews <= 0 {
		cfg.MaxReviews = DefaultMaxReviews
	}
	if cfg.Pause <= 0 {
		cfg.Pause = DefaultPause
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Checker{cfg: cfg, trigger: make(chan struct{}, 1), scripts: map[string][]Need{}, cache: map[Need]answer{}}
}

// Set records what a script's new version needs and has it checked soon.
func (c *Checker) Set(script string, needs []Need) {
	c.mu.Lock()
	c.scripts[script] = slices.Clone(needs)
	c.checked = false
	c.mu.Unlock()
	c.poke()
}

// Remove forgets an unloaded script.
func (c *Checker) Remove(script string) {
	c.mu.Lock()
	delete(c.scripts, script)
	c.mu.Unlock()
	c.poke()
}

func (c *Checker) poke() {
	select {
	case c.trigger <- struct{}{}:
	default:
	}
}

// Missing is what the last rounds found lacking, sorted.
func (c *Checker) Missing() []Need {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.missing)
}

// Checked reports whether the last round reported on every permission the loaded scripts and
// the runner need, and no script was set since: Missing is then the whole answer, not a part
// of it.
func (c *Checker) Checked() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.checked
}

// Run checks at once, on each Set and Remove, and every Interval, until ctx is done. A round
// that left permissions unreviewed (MaxReviews) is followed by the next after Pause.
func (c *Checker) Run(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		more := c.round(ctx)
		next := c.cfg.Interval
		if more {
			next = c.cfg.Pause
		}
		t.Reset(next)
		select {
		case <-ctx.Done():
			return
		case <-c.trigger:
		case <-t.C:
		}
	}
}

// round reviews what is not answered within Interval, at most MaxReviews of it, and reports
// the differences. It returns whether some permission was left unreviewed.
func (c *Checker) round(ctx context.Context) (more bool) {
	needs := c.all()
	reviews := 0
	for _, n := range needs {
		key := permission(n)
		c.mu.Lock()
		a, ok := c.cache[key]
		c.mu.Unlock()
		if ok && time.Since(a.at) < c.cfg.Interval {
			continue
		}
		if reviews >= c.cfg.MaxReviews {
			more = true
			continue
		}
		reviews++
		ns := n.Namespace
		if n.Own {
			ns = c.cfg.OwnNamespace
		}
		allowed, err := c.cfg.Reviewer.Allowed(ctx, n, ns)
		if err != nil {
			c.failed(ctx, err)
			return false
		}
		c.failing = false
		c.mu.Lock()
		c.cache[key] = answer{allowed: allowed, at: time.Now()}
		c.mu.Unlock()
	}
	c.report(needs)
	return more
}

// failed reports a review that got no answer: a WARN the first time, then at debug level until
// a review succeeds (an unreachable API server is reported by the informers already).
func (c *Checker) failed(ctx context.Context, err error) {
	switch {
	case ctx.Err() != nil:
	case c.failing:
		c.cfg.Logger.Debug("still cannot check the runner's permissions", "error", err.Error())
	default:
		c.cfg.Logger.Warn("cannot check the runner's permissions", "error", err.Error())
	}
	c.failing = true
}

// all is every script's needs and the runner's, sorted.
func (c *Checker) all() []Need {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(c.cfg.Runner)
	for _, script := range slices.Sorted(maps.Keys(c.scripts)) {
		out = append(out, c.scripts[script]...)
	}
	Sort(out)
	return out
}

// permission is a need stripped of who needs it and why: the cache key.
func permission(n Need) Need {
	n.Script, n.Why = "", ""
	return n
}

// report logs what became missing (WARN, with the rule to add) and what was granted since
// (INFO), once each per script and permission.
func (c *Checker) report(needs []Need) {
	var missing []Need
	c.mu.Lock()
	checked := true
	for _, n := range needs {
		a, ok := c.cache[permission(n)]
		checked = checked && ok
		if ok && !a.allowed {
			missing = append(missing, n)
		}
	}
	before := c.missing
	c.missing = missing
	c.checked = checked
	c.mu.Unlock()
	for _, n := range missing {
		if !slices.Contains(before, n) {
			c.cfg.Logger.Warn("the runner lacks a permission a script needs", "script", n.Script, "verb", n.Verb,
				"resource", n.GroupResource(), "namespace", c.namespace(n), "why", n.Why, "grant", n.Rule())
		}
	}
	for _, n := range before {
		if !slices.Contains(missing, n) && slices.Contains(needs, n) {
			c.cfg.Logger.Info("the runner now holds a permission a script needs", "script", n.Script, "verb", n.Verb,
				"resource", n.GroupResource(), "namespace", c.namespace(n))
		}
	}
	if !slices.Equal(before, missing) && c.cfg.Changed != nil {
		c.cfg.Changed()
	}
}

// OwnNamespace is where the runner's own needs are (CheckerConfig.OwnNamespace).
func (c *Checker) OwnNamespace() string { return c.cfg.OwnNamespace }

// namespace names where a need is, for logs: "" is every namespace.
func (c *Checker) namespace(n Need) string {
	if n.Own {
		return c.cfg.OwnNamespace
	}
	return n.Namespace
}

// maxForbidden bounds the refused calls remembered.
const maxForbidden = 100

// Forbidden is a call the API server refused a script at run time: a need the computation
// could not see (a call known at run time only) or a permission revoked since the check.
type Forbidden struct {
	Need      // Why is the call, e.g. "k8s.patch"
	Count int // refusals so far
	Last  time.Time
}

// Refused records a Forbidden answer to a script's call; the first of each kind is a WARN with
// the rule to add.
func (c *Checker) Refused(n Need) {
	c.mu.Lock()
	i := slices.IndexFunc(c.forbidden, func(f Forbidden) bool { return f.Need == n })
	first := i < 0
	switch {
	case !first:
		c.forbidden[i].Count++
		c.forbidden[i].Last = time.Now()
	case len(c.forbidden) < maxForbidden:
		c.forbidden = append(c.forbidden, Forbidden{Need: n, Count: 1, Last: time.Now()})
	}
	c.mu.Unlock()
	if first {
		c.cfg.Logger.Warn("the API server refused a script's call", "script", n.Script, "call", n.Why, "verb", n.Verb,
			"resource", n.GroupResource(), "namespace", n.Namespace, "grant", n.Rule())
		if c.cfg.Changed != nil {
			c.cfg.Changed()
		}
	}
}

// Forbidden lists the refused calls, in the order first refused.
func (c *Checker) Forbidden() []Forbidden {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.forbidden)
}
