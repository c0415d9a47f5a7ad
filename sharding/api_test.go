package sharding

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// The members against a real kube-apiserver: what reaches the API server is counted there.

var env *controlplane.ControlPlane

func TestMain(m *testing.M) { controlplane.Exit(m, &env) }

// apiRing is a ring of members on the control plane's Leases in namespace default.
type apiRing struct {
	client  kubernetes.Interface
	name    string
	members []*Member
}

// Leader election's defaults: lease 15s, renew deadline 10s, retry 2s.
var apiConfig = Config{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second,
	RetryPeriod: 2 * time.Second, DrainTimeout: 2 * time.Second}

func newAPIRing(t *testing.T) *apiRing {
	t.Helper()
	cp := controlplane.Require(t, env)
	client, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &apiRing{client: client, name: fmt.Sprintf("ring-%d", time.Now().UnixNano())}
}

// start runs a member of identity id until the test ends.
func (r *apiRing) start(t *testing.T, id string) *Member {
	t.Helper()
	return r.startOn(t, id, apiConfig, r.leases())
}

func (r *apiRing) leases() APILeases {
	return APILeases{Client: r.client.CoordinationV1(), Namespace: "default", Ring: r.name}
}

// startOn runs a member of identity id with cfg's durations on store until the test ends.
func (r *apiRing) startOn(t *testing.T, id string, cfg Config, store LeaseStore) *Member {
	t.Helper()
	cfg.Name, cfg.Identity = r.name, id
	m := New(cfg, store, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { m.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	r.members = append(r.members, m)
	return m
}

// settled waits until every member acts on a ring of all of them.
func (r *apiRing) settled(t *testing.T, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for _, m := range r.members {
		for st := m.Status(); !st.Valid || st.Pending || len(st.Members) != len(r.members); st = m.Status() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: ring %v (pending %v, valid %v) after %v, want all %d members", st.Identity, st.Members, st.Pending, st.Valid, within, len(r.members))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// leaseWrites counts, by Lease name, the changes of the ring's Leases the API server reports
// from now on, until the test ends.
type leaseWrites struct {
	mu     sync.Mutex
	counts map[string]int
}

func (r *apiRing) watchWrites(t *testing.T) *leaseWrites {
	t.Helper()
	w, err := r.client.CoordinationV1().Leases("default").Watch(t.Context(), metav1.ListOptions{LabelSelector: RingLabel + "=" + r.name})
	if err != nil {
		t.Fatal(err)
	}
	lw := &leaseWrites{counts: map[string]int{}}
	var wg sync.WaitGroup
	wg.Go(func() {
		for ev := range w.ResultChan() {
			if l, ok := ev.Object.(*coordinationv1.Lease); ok && ev.Type != watch.Error {
				lw.mu.Lock()
				lw.counts[l.Name]++
				lw.mu.Unlock()
			}
		}
	})
	t.Cleanup(func() { w.Stop(); wg.Wait() })
	return lw
}

func (lw *leaseWrites) snapshot() map[string]int {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	out := map[string]int{}
	for k, v := range lw.counts {
		out[k] = v
	}
	return out
}

// ownKeys returns n keys m handles.
func ownKeys(t *testing.T, m *Member, n int) []string {
	t.Helper()
	var keys []string
	for i := 0; len(keys) < n && i < 100*n; i++ {
		if k := fmt.Sprintf("ns/object-%d", i); m.Handles(k) {
			keys = append(keys, k)
		}
	}
	if len(keys) < n {
		t.Fatalf("%s handles %d of the keys tried, want %d", m.Identity(), len(keys), n)
	}
	return keys
}

// Under 1,000 handler calls per second on each replica for 10s, each writes its Lease once per
// retry period, as the API server sees it.
func TestLeaseWritesUnderLoad(t *testing.T) {
	t.Parallel()
	r := newAPIRing(t)
	for _, id := range []string{"a", "b", "c"} {
		r.start(t, id)
	}
	r.settled(t, 30*time.Second)
	writes := r.watchWrites(t)
	start := time.Now()
	var wg sync.WaitGroup
	calls := make([]int, len(r.members))
	for i, m := range r.members {
		keys := ownKeys(t, m, 20)
		wg.Go(func() { calls[i] = callLoad(m, keys, 1000, 10*time.Second) })
	}
	wg.Wait()
	took := time.Since(start)
	got := writes.snapshot()
	limit := int(took/apiConfig.RetryPeriod) + 1
	for i, m := range r.members {
		st := m.Status()
		n := got[st.Lease]
		t.Logf("%s: %d calls in %v, %d Lease writes", st.Identity, calls[i], took.Round(time.Millisecond), n)
		if calls[i] < 5000 {
			t.Errorf("%s made only %d calls in %v: the load is too low to show anything", st.Identity, calls[i], took)
		}
		if n > limit {
			t.Errorf("%s wrote its Lease %d times in %v, want at most %d (one per retry period %v)", st.Identity, n, took, limit, apiConfig.RetryPeriod)
		}
	}
}

// lossyLeases loses the reply to the next update when told: the update reaches the API
// server and is stored, the member sees a timeout.
type lossyLeases struct {
	APILeases
	lose atomic.Bool
}

func (l *lossyLeases) Update(ctx context.Context, lease Lease) (Lease, error) {
	got, err := l.APILeases.Update(ctx, lease)
	if err == nil && l.lose.CompareAndSwap(true, false) {
		return Lease{}, context.DeadlineExceeded
	}
	return got, err
}

// A renewal whose reply was lost, or kubectl annotate on the Lease, does not make the member
// lose its Lease: it stays valid past its renew deadline, renews, and the annotation stays.
func TestRenewalSurvivesAChangedLeaseOnTheAPIServer(t *testing.T) {
	t.Parallel()
	short := Config{LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond, DrainTimeout: time.Second}
	for _, name := range []string{"reply lost", "annotated"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newAPIRing(t)
			store := &lossyLeases{APILeases: r.leases()}
			m := r.startOn(t, "a", short, store)
			r.settled(t, 30*time.Second)
			leases := r.client.CoordinationV1().Leases("default")
			if name == "reply lost" {
				store.lose.Store(true)
			} else {
				l, err := leases.Get(t.Context(), m.Status().Lease, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				l.Annotations["team"] = "web"
				if _, err := leases.Update(t.Context(), l, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			changed := time.Now()
			for time.Since(changed) < short.RenewDeadline+time.Second {
				if !m.Valid() {
					t.Fatalf("the member lost its Lease %v after the change", time.Since(changed).Round(time.Millisecond))
				}
				time.Sleep(20 * time.Millisecond)
			}
			l, err := leases.Get(t.Context(), m.Status().Lease, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !l.Spec.RenewTime.After(changed.Add(short.RenewDeadline)) {
				t.Errorf("the Lease was last renewed at %v, not since the change at %v", l.Spec.RenewTime, changed)
			}
			if name == "annotated" && l.Annotations["team"] != "web" {
				t.Errorf("a renewal dropped the annotation: %v", l.Annotations)
			}
		})
	}
}
