package permissions_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/permissions"
)

// fakeReviewer allows what its set holds and counts the reviews.
type fakeReviewer struct {
	mu      sync.Mutex
	allowed map[string]bool // "verb resource"
	reviews int
}

func (f *fakeReviewer) Allowed(_ context.Context, n permissions.Need, _ string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reviews++
	return f.allowed[n.Verb+" "+n.GroupResource()], nil
}

func (f *fakeReviewer) set(key string, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.allowed[key] = ok
}

func (f *fakeReviewer) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reviews
}

type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestCheckerReportsAndRecovers: a missing permission is a WARN naming script, verb, resource
// and the rule, once; granting it is noticed within the interval; answers are cached.
func TestCheckerReportsAndRecovers(t *testing.T) {
	t.Parallel()
	rev := &fakeReviewer{allowed: map[string]bool{"list deployments.apps": true, "watch deployments.apps": true}}
	logs := &logBuffer{}
	c := permissions.NewChecker(permissions.CheckerConfig{Reviewer: rev, Interval: 50 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	defer func() { cancel(); <-done }()
	needs := []permissions.Need{
		{Script: "a.js", Group: "apps", Resource: "deployments", Verb: "list", Why: "watch"},
		{Script: "a.js", Group: "apps", Resource: "deployments", Verb: "watch", Why: "watch"},
		{Script: "a.js", Group: "apps", Resource: "deployments", Verb: "patch", Why: "k8s.patch at a.js:3"},
		{Script: "b.js", Group: "apps", Resource: "deployments", Verb: "patch", Why: "k8s.patch at b.js:9"},
	}
	c.Set("a.js", needs[:3])
	c.Set("b.js", needs[3:])
	waitFor(t, "both scripts' missing patch", func() bool { return len(c.Missing()) == 2 })
	warn := `level=WARN msg="the runner lacks a permission a script needs" script=a.js verb=patch resource=deployments.apps namespace="" ` +
		`why="k8s.patch at a.js:3" grant="kubectl create clusterrole NAME --verb=patch --resource=deployments.apps"`
	waitFor(t, "the WARN", func() bool { return strings.Contains(logs.String(), warn) })
	if reviews := rev.count(); reviews > 3 {
		t.Errorf("%d reviews for 3 distinct permissions: the answers are not shared", reviews)
	}
	rev.set("patch deployments.apps", true)
	waitFor(t, "the grant to be noticed", func() bool { return len(c.Missing()) == 0 })
	if !strings.Contains(logs.String(), `msg="the runner now holds a permission a script needs" script=b.js verb=patch`) {
		t.Errorf("no INFO on the grant:\n%s", logs)
	}
	if n := strings.Count(logs.String(), "script=a.js verb=patch resource=deployments.apps namespace=\"\" why"); n != 1 {
		t.Errorf("the missing permission was reported %d times, want once:\n%s", n, logs)
	}
	c.Remove("a.js")
	c.Remove("b.js")
}

// TestCheckerBoundsReviews: one round makes at most MaxReviews reviews; the rest follow in
// the next rounds.
func TestCheckerBoundsReviews(t *testing.T) {
	t.Parallel()
	rev := &fakeReviewer{allowed: map[string]bool{}}
	c := permissions.NewChecker(permissions.CheckerConfig{Reviewer: rev, Interval: time.Hour, MaxReviews: 2, Pause: time.Hour})
	var needs []permissions.Need
	for _, verb := range []string{"get", "list", "watch", "patch", "delete"} {
		needs = append(needs, permissions.Need{Script: "a.js", Resource: "pods", Verb: verb})
	}
	c.Set("a.js", needs) // pokes: a second round follows the first
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "two rounds", func() bool { return len(c.Missing()) == 4 })
	if rev.count() != 4 {
		t.Errorf("%d reviews in two rounds of at most 2", rev.count())
	}
	c.Set("a.js", needs)
	waitFor(t, "the third round", func() bool { return len(c.Missing()) == 5 })
	if rev.count() != 5 {
		t.Errorf("%d reviews, want each of the 5 permissions once (answers cached)", rev.count())
	}
}

// TestCheckerRefused: a refused call is a WARN with the rule, once, and counted.
func TestCheckerRefused(t *testing.T) {
	t.Parallel()
	logs := &logBuffer{}
	c := permissions.NewChecker(permissions.CheckerConfig{Reviewer: &fakeReviewer{}, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	n := permissions.Need{Script: "a.js", Resource: "secrets", Verb: "get", Namespace: "x", Why: "k8s.get"}
	c.Refused(n)
	c.Refused(n)
	if f := c.Forbidden(); len(f) != 1 || f[0].Count != 2 {
		t.Errorf("forbidden %+v, want one entry counted twice", f)
	}
	if strings.Count(logs.String(), "the API server refused a script's call") != 1 ||
		!strings.Contains(logs.String(), `grant="kubectl create role NAME -n x --verb=get --resource=secrets"`) {
		t.Errorf("log:\n%s", logs)
	}
}

// failingReviewer fails every review.
type failingReviewer struct {
	mu sync.Mutex
	n  int
}

func (f *failingReviewer) Allowed(context.Context, permissions.Need, string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	return false, context.DeadlineExceeded
}

func (f *failingReviewer) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// TestCheckerUnansweredWarnsOnce: an API server that does not answer is one WARN, not one per
// round.
func TestCheckerUnansweredWarnsOnce(t *testing.T) {
	t.Parallel()
	rev := &failingReviewer{}
	logs := &logBuffer{}
	c := permissions.NewChecker(permissions.CheckerConfig{Reviewer: rev, Interval: 5 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	c.Set("a.js", []permissions.Need{{Script: "a.js", Resource: "pods", Verb: "list"}})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	waitFor(t, "several rounds", func() bool {
		return strings.Count(logs.String(), "cannot check") >= 1 && len(c.Missing()) == 0 && rev.count() >= 3
	})
	cancel()
	<-done
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 {
		t.Errorf("%d WARNs for %d failed rounds, want 1:\n%s", n, rev.count(), logs)
	}
}

// TestCheckerChecked: Checked is false while some need has no answer (reviews left over by
// MaxReviews), and true once every one has, denied or not.
func TestCheckerChecked(t *testing.T) {
	t.Parallel()
	var needs []permissions.Need
	for _, verb := range []string{"get", "list", "watch", "patch", "delete"} {
		needs = append(needs, permissions.Need{Script: "a.js", Resource: "pods", Verb: verb})
	}
	run := func(c *permissions.Checker) {
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); c.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
	}
	rev := &fakeReviewer{allowed: map[string]bool{}}
	bounded := permissions.NewChecker(permissions.CheckerConfig{Reviewer: rev, Interval: time.Hour, MaxReviews: 2, Pause: time.Hour})
	bounded.Set("a.js", needs)
	if bounded.Checked() {
		t.Error("Checked before any review")
	}
	run(bounded)
	waitFor(t, "two rounds of two reviews", func() bool { return rev.count() == 4 })
	if bounded.Checked() {
		t.Error("Checked with one of five permissions unreviewed")
	}
	all := permissions.NewChecker(permissions.CheckerConfig{Reviewer: &fakeReviewer{allowed: map[string]bool{"get pods": true}}, Interval: time.Hour})
	all.Set("a.js", needs)
	run(all)
	waitFor(t, "every permission answered", all.Checked)
	if got := len(all.Missing()); got != 4 {
		t.Errorf("%d missing, want the 4 denied", got)
	}
	all.Set("b.js", []permissions.Need{{Script: "b.js", Resource: "secrets", Verb: "get"}})
	if all.Checked() {
		t.Error("Checked with a script set since the last round")
	}
	waitFor(t, "the new script's permission answered", all.Checked)
}
