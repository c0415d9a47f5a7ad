package sharding

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/utils/ptr"
)

// Lease is what a member reads and writes of a coordination.k8s.io/v1 Lease.
type Lease struct {
	Name, ResourceVersion string
	// Holder is the member's identity; "" once released.
	Holder string
	// Renewed is spec.renewTime, Duration spec.leaseDurationSeconds.
	Renewed  time.Time
	Duration time.Duration
	// Drained is the fingerprint of the ring the holder has drained to: it handles no key that
	// is not its own in that ring (annotation DrainedAnnotation).
	Drained string
	// Listed is the fingerprint of the ring whose keys the holder's caches hold, watches
	// started (annotation ListedAnnotation; Config.AwaitListed): it may be given them.
	Listed string
	// Plan is the plan the holder made as the lowest member of a ring (PlanAnnotation: the
	// ring's fingerprint, a space, the plan); "" when it made none.
	Plan string
	// Leaving is set while the holder hands its keys over before it stops
	// (LeavingAnnotation).
	Leaving bool
	// others are the annotations other than DrainedAnnotation, ListedAnnotation and
	// PlanAnnotation, kept as they are on renewal.
	others map[string]string
}

// LeaseStore is what a member needs of the API server: the ring's Leases. Update and Delete
// are conditional on the resource version given; a conflict is an error.
type LeaseStore interface {
	List(ctx context.Context) ([]Lease, error)
	Create(ctx context.Context, l Lease) (Lease, error)
	Update(ctx context.Context, l Lease) (Lease, error)
	Delete(ctx context.Context, name, resourceVersion string) error
}

const (
	// RingLabel marks the Leases of one ring; its value is the ring's name
	// (--leader-elect-resource-name).
	RingLabel = "jsinformer.io/shard-ring"
	// DrainedAnnotation holds Lease.Drained.
	DrainedAnnotation = "jsinformer.io/drained-ring"
	// ListedAnnotation holds Lease.Listed (written only when set).
	ListedAnnotation = "jsinformer.io/listed-ring"
)

// LeaseName is the name of identity's Lease in ring name: the name, "-", and the identity
// made a valid object name.
func LeaseName(name, identity string) string {
	var b strings.Builder
	b.WriteString(name + "-")
	for _, c := range strings.ToLower(identity) {
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	s := b.String()
	if len(s) > 200 {
		s = s[:200]
	}
	// The identity's hash keeps two identities that differ only in replaced characters apart.
	return strings.TrimRight(s, "-.") + "-" + strconv.FormatUint(hash64(identity)&0xffffff, 16)
}

// APILeases is the LeaseStore of namespace on the API server, for ring name.
type APILeases struct {
	Client          coordinationclient.LeasesGetter
	Namespace, Ring string
}

// List returns the ring's Leases.
func (a APILeases) List(ctx context.Context) ([]Lease, error) {
	list, err := a.Client.Leases(a.Namespace).List(ctx, metav1.ListOptions{LabelSelector: RingLabel + "=" + a.Ring})
	if err != nil {
		return nil, fmt.Errorf("list shard leases: %w", err)
	}
	out := make([]Lease, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, fromAPI(&list.Items[i]))
	}
	return out, nil
}

// Create creates l.
func (a APILeases) Create(ctx context.Context, l Lease) (Lease, error) {
	got, err := a.Client.Leases(a.Namespace).Create(ctx, a.toAPI(l), metav1.CreateOptions{})
	if err != nil {
		return Lease{}, fmt.Errorf("create shard lease %s: %w", l.Name, err)
	}
	return fromAPI(got), nil
}

// Update writes l if its resource version is still the server's.
func (a APILeases) Update(ctx context.Context, l Lease) (Lease, error) {
	got, err := a.Client.Leases(a.Namespace).Update(ctx, a.toAPI(l), metav1.UpdateOptions{})
	if err != nil {
		return Lease{}, fmt.Errorf("renew shard lease %s: %w", l.Name, err)
	}
	return fromAPI(got), nil
}

// Delete deletes the Lease name if its resource version is still resourceVersion.
func (a APILeases) Delete(ctx context.Context, name, resourceVersion string) error {
	err := a.Client.Leases(a.Namespace).Delete(ctx, name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{ResourceVersion: &resourceVersion}})
	if err != nil {
		return fmt.Errorf("delete shard lease %s: %w", name, err)
	}
	return nil
}

func (a APILeases) toAPI(l Lease) *coordinationv1.Lease {
	annotations := maps.Clone(l.others)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[DrainedAnnotation] = l.Drained
	if l.Listed != "" {
		annotations[ListedAnnotation] = l.Listed
	}
	if l.Plan != "" {
		annotations[PlanAnnotation] = l.Plan
	}
	if l.Leaving {
		annotations[LeavingAnnotation] = "true"
	}
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: l.Name, Namespace: a.Namespace, ResourceVersion: l.ResourceVersion,
			Labels: map[string]string{RingLabel: a.Ring}, Annotations: annotations},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(l.Holder),
			LeaseDurationSeconds: ptr.To(int32((l.Duration + time.Second - 1) / time.Second)),
			RenewTime:            &metav1.MicroTime{Time: l.Renewed},
		},
	}
}

func fromAPI(l *coordinationv1.Lease) Lease {
	out := Lease{Name: l.Name, ResourceVersion: l.ResourceVersion, Drained: l.Annotations[DrainedAnnotation],
		Listed: l.Annotations[ListedAnnotation], Plan: l.Annotations[PlanAnnotation], Leaving: l.Annotations[LeavingAnnotation] == "true"}
	for k, v := range l.Annotations {
		if k != DrainedAnnotation && k != ListedAnnotation && k != PlanAnnotation && k != LeavingAnnotation {
			if out.others == nil {
				out.others = map[string]string{}
			}
			out.others[k] = v
		}
	}
	if l.Spec.HolderIdentity != nil {
		out.Holder = *l.Spec.HolderIdentity
	}
	if l.Spec.LeaseDurationSeconds != nil {
		out.Duration = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	if l.Spec.RenewTime != nil {
		out.Renewed = l.Spec.RenewTime.Time
	}
	return out
}

// Plan reads the ring the Leases name (every holder, expired or not) and the plan its lowest
// member wrote for it; an error when that member has written none for this ring (yet). For
// tools and tests: members read plans as part of their ticks.
func (a APILeases) Plan(ctx context.Context) (View, error) {
	leases, err := a.List(ctx)
	if err != nil {
		return View{}, err
	}
	var ids []string
	for _, l := range leases {
		if l.Holder != "" && !l.Leaving {
			ids = append(ids, l.Holder)
		}
	}
	return planOf(leases, NewRing(ids...), a.Ring)
}

// PlanFor reads the plan ring's lowest member wrote for ring, whatever other Leases there are
// (an expired one not deleted yet, a member leaving).
func (a APILeases) PlanFor(ctx context.Context, ring Ring) (View, error) {
	leases, err := a.List(ctx)
	if err != nil {
		return View{}, err
	}
	return planOf(leases, ring, a.Ring)
}

// planOf is the view of ring with the plan its lowest member's Lease holds for it.
func planOf(leases []Lease, ring Ring, name string) (View, error) {
	if len(ring) == 0 {
		return View{}, fmt.Errorf("read shard plan: ring %s has no member", name)
	}
	for _, l := range leases {
		if p := parseRingPlan(l.Plan); l.Holder == ring[0] && p.ring == ring.Fingerprint() {
			return View{Ring: ring, Plan: p.plan}, nil
		}
	}
	return View{}, fmt.Errorf("read shard plan: %s, the lowest member of %v, has written no plan for it", ring[0], ring)
}
