package sharding

import (
	"context"
	"testing"
)

// listThen is a LeaseStore whose next List runs then after reading: another member's tick in
// between this member's List and its Create.
type listThen struct {
	*fakeLeases
	then func()
}

func (l *listThen) List(ctx context.Context) ([]Lease, error) {
	leases, err := l.fakeLeases.List(ctx)
	if then := l.then; then != nil {
		l.then = nil
		then()
	}
	return leases, err
}

// Two members starting at the same moment, each reading the ring before the other's Lease
// exists, never handle a key both: neither gains the ring of one it read before its own Lease
// was listed, and once they have listed each other they settle on one ring.
func TestMembersStartingTogetherNeverBothHandle(t *testing.T) {
	t.Parallel()
	r := newTestRing(t, 200)
	b := r.join("b")
	path := &listThen{fakeLeases: r.store, then: func() { b.tick(t.Context()) }}
	a := New(Config{Name: "jsinformer", Identity: "a", LeaseDuration: tLease, RenewDeadline: tRenew,
		RetryPeriod: tRetry, DrainTimeout: tDrain}, path, r.clock)
	r.members["a"] = a
	a.tick(t.Context()) // a lists nothing; b then lists nothing and creates its Lease; a creates its own
	r.exclusive()
	r.settle(4 * tLease)
}
