package sharding

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var leasesResource = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}

// fakeLeases is a LeaseStore in memory with the API server's conflict rules.
type fakeLeases struct {
	mu     sync.Mutex
	leases map[string]Lease
	rv     int
	writes map[string]int // successful creates and updates, by Lease name
}

func newFakeLeases() *fakeLeases {
	return &fakeLeases{leases: map[string]Lease{}, writes: map[string]int{}}
}

func (f *fakeLeases) List(context.Context) ([]Lease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Lease, 0, len(f.leases))
	for _, l := range f.leases {
		out = append(out, l)
	}
	return out, nil
}

func (f *fakeLeases) Create(_ context.Context, l Lease) (Lease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.leases[l.Name]; ok {
		return Lease{}, apierrors.NewAlreadyExists(leasesResource, l.Name)
	}
	f.rv++
	l.ResourceVersion = strconv.Itoa(f.rv)
	f.leases[l.Name] = l
	f.writes[l.Name]++
	return l, nil
}

func (f *fakeLeases) Update(_ context.Context, l Lease) (Lease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	old, ok := f.leases[l.Name]
	if !ok {
		return Lease{}, apierrors.NewNotFound(leasesResource, l.Name)
	}
	if old.ResourceVersion != l.ResourceVersion {
		return Lease{}, apierrors.NewConflict(leasesResource, l.Name, errors.New("resource version changed"))
	}
	f.rv++
	l.ResourceVersion = strconv.Itoa(f.rv)
	f.leases[l.Name] = l
	f.writes[l.Name]++
	return l, nil
}

func (f *fakeLeases) Delete(_ context.Context, name, rv string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	old, ok := f.leases[name]
	if !ok {
		return apierrors.NewNotFound(leasesResource, name)
	}
	if old.ResourceVersion != rv {
		return apierrors.NewConflict(leasesResource, name, errors.New("resource version changed"))
	}
	delete(f.leases, name)
	return nil
}

// written is how many times the Lease name was created or updated.
func (f *fakeLeases) written(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes[name]
}

// annotate sets an annotation on the Lease name, as kubectl annotate would.
func (f *fakeLeases) annotate(name, key, value string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.leases[name]
	l.others = maps.Clone(l.others)
	if l.others == nil {
		l.others = map[string]string{}
	}
	l.others[key] = value
	f.rv++
	l.ResourceVersion = strconv.Itoa(f.rv)
	f.leases[name] = l
}

func (f *fakeLeases) get(name string) Lease {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.leases[name]
}

// cutLeases is one member's path to a fakeLeases, which the test can cut, or on which it can
// lose the replies to updates (the update is stored, the member sees an error).
type cutLeases struct {
	*fakeLeases
	mu        sync.Mutex
	cut       bool
	loseReply int // updates whose reply is lost
	late      bool
	pending   *Lease // a late update: stored right after the next List read the Lease
}

var errCut = errors.New("connection cut")

func (c *cutLeases) down() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cut
}

func (c *cutLeases) List(ctx context.Context) ([]Lease, error) {
	if c.down() {
		return nil, errCut
	}
	leases, err := c.fakeLeases.List(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending != nil {
		_, _ = c.fakeLeases.Update(ctx, *c.pending)
		c.pending = nil
	}
	return leases, err
}

func (c *cutLeases) Update(ctx context.Context, l Lease) (Lease, error) {
	if c.down() {
		return Lease{}, errCut
	}
	c.mu.Lock()
	if c.late {
		c.late, c.pending = false, &l
		c.mu.Unlock()
		return Lease{}, errReplyLost
	}
	c.mu.Unlock()
	got, err := c.fakeLeases.Update(ctx, l)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil && c.loseReply > 0 {
		c.loseReply--
		return Lease{}, errReplyLost
	}
	return got, err
}

var errReplyLost = errors.New("client timeout: reply lost")

// fakeClock is moved by the test only.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) step(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
