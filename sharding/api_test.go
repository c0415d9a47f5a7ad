package sharding

import (
	"context"
	"fmt"
	"sync"
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
	cfg := apiConfig
	cfg.Name, cfg.Identity = r.name, id
	m := New(cfg, APILeases{Client: r.client.CoordinationV1(), Namespace: "default", Ring: r.name}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := m.Run(ctx); err != nil {
			t.Errorf("member %s: %v", id, err)
		}
	})
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
