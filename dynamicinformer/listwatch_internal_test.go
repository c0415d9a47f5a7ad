package dynamicinformer

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// scripted is a ListerWatcher whose calls fail with the queued errors, then succeed.
type scripted struct {
	mu      sync.Mutex
	errs    []error
	calls   int
	watches []*watch.FakeWatcher
}

func (s *scripted) next() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if len(s.errs) == 0 {
		return nil
	}
	err := s.errs[0]
	s.errs = s.errs[1:]
	return err
}

func (s *scripted) ListWithContext(context.Context, metav1.ListOptions) (runtime.Object, error) {
	if err := s.next(); err != nil {
		return nil, err
	}
	return &metav1.List{}, nil
}

func (s *scripted) WatchWithContext(context.Context, metav1.ListOptions) (watch.Interface, error) {
	if err := s.next(); err != nil {
		return nil, err
	}
	w := watch.NewFakeWithChanSize(4, false)
	s.mu.Lock()
	s.watches = append(s.watches, w)
	s.mu.Unlock()
	return w, nil
}

// events collects health events.
type events struct {
	mu  sync.Mutex
	got []HealthEvent
}

func (e *events) add(ev HealthEvent) { e.mu.Lock(); e.got = append(e.got, ev); e.mu.Unlock() }

func (e *events) kinds() []HealthEventKind {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]HealthEventKind, len(e.got))
	for i, ev := range e.got {
		out[i] = ev.Kind
	}
	return out
}

func (e *events) wait(t *testing.T, n int) []HealthEvent {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		e.mu.Lock()
		if len(e.got) >= n {
			out := append([]HealthEvent(nil), e.got...)
			e.mu.Unlock()
			return out
		}
		e.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("want %d health events, got %v", n, e.kinds())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var (
	testKey      = Key{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}}
	errRefused   = errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
	unavailable  = apierrors.NewServiceUnavailable("etcd is down")
	expired      = apierrors.NewResourceExpired("too old resource version: 1 (50)")
	badRequest   = apierrors.NewBadRequest("unable to parse requirement")
	forbidden    = apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", errors.New("rbac"))
	fastBackoff  = Backoff{Initial: time.Millisecond, Max: 4 * time.Millisecond, MaxRejected: 8 * time.Millisecond}
	sendInitial  = true
	streamedList = metav1.ListOptions{SendInitialEvents: &sendInitial}
)

func newTestListWatch(inner *scripted, ev *events) *listWatch {
	return &listWatch{inner: inner, health: newTracker(testKey, ev.add, time.Hour), known: newKnown(), backoff: fastBackoff}
}

func TestListWatchRetriesTransientFailures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		errs      []error
		wantErr   error
		wantCalls int
		wantKinds []HealthEventKind
	}{
		{"refused then ok", []error{errRefused, errRefused, errRefused}, nil, 4, []HealthEventKind{Failing, Recovered}},
		{"5xx then ok", []error{unavailable}, nil, 2, []HealthEventKind{Failing, Recovered}},
		{"forbidden then ok", []error{forbidden, forbidden}, nil, 3, []HealthEventKind{Failing, Recovered}},
		{"410 goes to the reflector", []error{expired}, expired, 1, nil},
		{"bad request goes to the reflector", []error{badRequest}, badRequest, 1, []HealthEventKind{Failing}},
		{"ok", nil, nil, 1, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			inner, ev := &scripted{errs: tc.errs}, &events{}
			lw := newTestListWatch(inner, ev)
			_, err := lw.ListWithContext(t.Context(), metav1.ListOptions{})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if inner.calls != tc.wantCalls {
				t.Errorf("calls = %d, want %d", inner.calls, tc.wantCalls)
			}
			if got := ev.kinds(); !equalKinds(got, tc.wantKinds) {
				t.Errorf("health events = %v, want %v", got, tc.wantKinds)
			}
		})
	}
}

func equalKinds(a, b []HealthEventKind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestListWatchStopsRetryingWhenCancelled(t *testing.T) {
	t.Parallel()
	inner := &scripted{errs: make([]error, 1<<20)}
	for i := range inner.errs {
		inner.errs[i] = errRefused
	}
	lw := newTestListWatch(inner, &events{})
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := lw.WatchWithContext(ctx, metav1.ListOptions{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's", err)
	}
	if h := lw.health.snapshot(); h.Healthy || h.FailingSince.IsZero() {
		t.Errorf("health = %+v, want failing", h)
	}
}

// A watch reopened after a failure recovers with its first event; one that opens with "410
// Gone" recovers with the relist that follows, reported as relisted.
func TestWatchRecoveryWaitsForFirstEvent(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name         string
		first        watch.EventType
		relist       bool
		wantRelisted bool
	}{
		{"resumed", watch.Modified, false, false},
		{"expired then relisted", watch.Error, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			inner, ev := &scripted{errs: []error{errRefused}}, &events{}
			lw := newTestListWatch(inner, ev)
			w, err := lw.WatchWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "10"})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			if got := ev.kinds(); !equalKinds(got, []HealthEventKind{Failing}) {
				t.Fatalf("before the first event: %v, want only Failing", got)
			}
			inner.watches[0].Action(tc.first, &metav1.Status{})
			<-w.ResultChan()
			if tc.relist {
				if _, err := lw.WatchWithContext(t.Context(), streamedList); err != nil {
					t.Fatal(err)
				}
			}
			got := ev.wait(t, 2)
			if got[1].Kind != Recovered || got[1].Relisted != tc.wantRelisted || got[1].Down <= 0 {
				t.Errorf("recovery = %+v, want Recovered relisted=%v", got[1], tc.wantRelisted)
			}
			h := lw.health.snapshot()
			if !h.Healthy || h.LastContact.IsZero() {
				t.Errorf("health = %+v, want healthy with contact", h)
			}
		})
	}
}

// A quiet resource sends nothing on a resumed watch: it counts as recovered after the settle
// window.
func TestWatchRecoverySettlesOnSilence(t *testing.T) {
	t.Parallel()
	inner, ev := &scripted{errs: []error{errRefused}}, &events{}
	lw := newTestListWatch(inner, ev)
	w, err := lw.WatchWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "10"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	got := ev.wait(t, 2)
	if got[1].Kind != Recovered || got[1].Relisted {
		t.Errorf("recovery = %+v, want Recovered without relist", got[1])
	}
}

func TestStillFailingAtMostOncePerRemind(t *testing.T) {
	t.Parallel()
	ev := &events{}
	tr := newTracker(testKey, ev.add, 30*time.Millisecond)
	for range 5 {
		tr.failed(errRefused) // one Failing, then nothing within the reminder period
	}
	if got := ev.kinds(); !equalKinds(got, []HealthEventKind{Failing}) {
		t.Fatalf("events = %v, want one Failing", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(ev.kinds()) < 2 && time.Now().Before(deadline) {
		tr.failed(errRefused)
		time.Sleep(5 * time.Millisecond)
	}
	if got := ev.kinds(); !equalKinds(got, []HealthEventKind{Failing, StillFailing}) {
		t.Fatalf("events = %v, want Failing then one StillFailing", got)
	}
}

func TestHealthCountsRelistsAndWatchRestarts(t *testing.T) {
	t.Parallel()
	lw := newTestListWatch(&scripted{}, &events{})
	ctx := t.Context()
	for _, call := range []func() error{
		func() error { _, err := lw.WatchWithContext(ctx, streamedList); return err },                     // initial list
		func() error { _, err := lw.WatchWithContext(ctx, metav1.ListOptions{}); return err },             // first watch
		func() error { _, err := lw.WatchWithContext(ctx, metav1.ListOptions{}); return err },             // restart
		func() error { _, err := lw.ListWithContext(ctx, metav1.ListOptions{}); return err },              // relist
		func() error { _, err := lw.ListWithContext(ctx, metav1.ListOptions{Continue: "x"}); return err }, // same list
	} {
		if err := call(); err != nil {
			t.Fatal(err)
		}
	}
	if h := lw.health.snapshot(); h.Relists != 1 || h.WatchRestarts != 1 {
		t.Errorf("relists %d, watch restarts %d; want 1 and 1", h.Relists, h.WatchRestarts)
	}
}

func TestBackoffIsBoundedAndJittered(t *testing.T) {
	t.Parallel()
	b := Backoff{Initial: 100 * time.Millisecond, Max: time.Second}
	seen := map[time.Duration]bool{}
	for attempt := range 20 {
		d := b.delay(attempt, b.Max)
		if d > b.Max || d < 50*time.Millisecond {
			t.Fatalf("attempt %d: delay %v outside [50ms, 1s]", attempt, d)
		}
		seen[d] = true
	}
	if len(seen) < 5 {
		t.Errorf("only %d distinct delays in 20: not jittered", len(seen))
	}
}
