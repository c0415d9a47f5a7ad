package shardrange

// balancer gives slices of weights w to n members (NewPlan's owners). Its passes are, in
// order: keep the start owners, shed what puts a member above the bound, place what has no
// owner, even out loads down to the fair ceiling, then even out slice counts with slices
// of weight 0. Each pass changes nothing on its own result, so a plan recomputed from itself
// with the same ring and namespaces is the same plan.
type balancer struct {
	w     [Slices]int
	start [Slices]int32
	owner [Slices]int32
	load  []int // weight owned, per member
	count []int // slices owned, per member
	fair  int   // ⌈total weight / members⌉
	bound int   // fair + heaviest weight − 1: no member ends above it
}

// balance returns the owner (member index) of each slice.
func balance(w [Slices]int, start [Slices]int32, members int) [Slices]int32 {
	b := &balancer{w: w, start: start, owner: start, load: make([]int, members), count: make([]int, members)}
	total, heaviest := 0, 0
	for i, o := range b.owner {
		total, heaviest = total+w[i], max(heaviest, w[i])
		if o >= 0 {
			b.load[o] += w[i]
			b.count[o]++
		}
	}
	b.fair = ceilDiv(total, members)
	b.bound = b.fair + max(heaviest-1, 0)
	b.shed()
	b.place()
	b.evenLoads()
	b.evenCounts()
	return b.owner
}

func (b *balancer) give(s int, m int32) {
	if o := b.owner[s]; o >= 0 {
		b.load[o] -= b.w[s]
		b.count[o]--
	}
	b.owner[s] = m
	if m >= 0 {
		b.load[m] += b.w[s]
		b.count[m]++
	}
}

// shed takes from each member above the bound its weighted slices, the highest first,
// until it is within the bound.
func (b *balancer) shed() {
	for m := range b.load {
		for s := Slices - 1; s >= 0 && b.load[m] > b.bound; s-- {
			if b.owner[s] == int32(m) && b.w[s] > 0 {
				b.give(s, -1)
			}
		}
	}
}

// place gives each slice without an owner, in order (those holding namespaces first), to its start owner if that stays within
// the fair ceiling of weight; a slice that had no owner in the ring to the owner of the
// nearest slice before it that has one, on the same condition and while it holds fewer than ⌈Slices/members⌉ slices: contiguous runs; else a slice of weight 0 to the member
// with the fewest slices, a weighted one to the least loaded member: then no member exceeds
// the bound, since the least loaded holds at most ⌊(total − w)/members⌋ before it takes a
// slice of weight w.
func (b *balancer) place() {
	for _, weighted := range []bool{true, false} { // then slices of weight 0 by the final counts
		for s := range b.owner {
			if b.owner[s] < 0 && (b.w[s] > 0) == weighted {
				b.placeOne(s)
			}
		}
	}
}

// placeOne gives slice s, which has no owner, to a member (place).
func (b *balancer) placeOne(s int) {
	before := b.ownerBefore(s)
	switch {
	case b.start[s] >= 0 && b.load[b.start[s]]+b.w[s] <= b.fair:
		b.give(s, b.start[s])
	case b.start[s] < 0 && before >= 0 && b.load[before]+b.w[s] <= b.fair && b.count[before] < ceilDiv(Slices, len(b.count)):
		b.give(s, before)
	case b.w[s] == 0:
		b.give(s, b.fewest())
	default:
		b.give(s, b.leastLoaded())
	}
}

// leastLoaded is the member with the least weight, then the fewest slices, then the lowest
// index.
func (b *balancer) leastLoaded() int32 {
	best := 0
	for m := range b.load {
		if b.load[m] < b.load[best] || b.load[m] == b.load[best] && b.count[m] < b.count[best] {
			best = m
		}
	}
	return int32(best)
}

// ownerBefore is the owner of the nearest slice below s that has one, -1 if none.
func (b *balancer) ownerBefore(s int) int32 {
	for s--; s >= 0; s-- {
		if b.owner[s] >= 0 {
			return b.owner[s]
		}
	}
	return -1
}

// fewest is the member with the fewest slices, the lowest index among equals.
func (b *balancer) fewest() int32 {
	best := 0
	for m := range b.count {
		if b.count[m] < b.count[best] {
			best = m
		}
	}
	return int32(best)
}

// evenLoads moves weighted slices from the most loaded member (the lowest index among
// equals) while it is above the fair ceiling and the least loaded can take one of its slices
// within the ceiling: preferably a slice no heavier than its excess (so that it does not drop
// below others, who would then take from each other) that it took in this plan (a slice
// moving anyway).
func (b *balancer) evenLoads() {
	for {
		top := 0
		for m := range b.load {
			if b.load[m] > b.load[top] {
				top = m
			}
		}
		if b.load[top] <= b.fair {
			return
		}
		to, excess := b.leastLoaded(), b.load[top]-b.fair
		fits := func(s int) bool { return b.w[s] > 0 && b.load[to]+b.w[s] <= b.fair }
		s := b.pick(int32(top), to,
			func(s int) bool { return fits(s) && b.w[s] <= excess && b.start[s] != int32(top) },
			func(s int) bool { return fits(s) && b.w[s] <= excess },
			fits)
		if s < 0 {
			return
		}
		b.give(s, to)
	}
}

// evenCounts moves slices of weight 0 from the member with the most slices among those
// holding one to the member with the fewest, while their counts differ by more than 1.
func (b *balancer) evenCounts() {
	for {
		to, from := b.fewest(), -1
		for s, o := range b.owner {
			if b.w[s] == 0 && (from < 0 || b.count[o] > b.count[from] || b.count[o] == b.count[from] && int(o) < from) {
				from = int(o)
			}
		}
		if from < 0 || b.count[from]-b.count[to] <= 1 {
			return
		}
		b.give(b.pick(int32(from), to, func(s int) bool { return b.w[s] == 0 }), to)
	}
}

// pick is a slice of from that fits, by the first of fits that any slice of from meets: one
// next to a slice of to if there is (keeping runs contiguous), else the highest; -1 if none
// fits.
func (b *balancer) pick(from, to int32, fits ...func(s int) bool) int {
	for _, fit := range fits {
		best := -1
		for s := Slices - 1; s >= 0; s-- {
			if b.owner[s] != from || !fit(s) {
				continue
			}
			if s > 0 && b.owner[s-1] == to || s < Slices-1 && b.owner[s+1] == to {
				return s
			}
			if best < 0 {
				best = s
			}
		}
		if best >= 0 {
			return best
		}
	}
	return -1
}
