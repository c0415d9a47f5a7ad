package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"
)

// The outbox: messages a script sends under an idempotency key, kept as records of the
// script's outbox scope (a Scope named OutboxScope(script), apart from its ctx.store keys) and
// delivered by whoever claims them. A record goes
//
//	pending ──Claim──▶ claimed ──Done──▶ done
//	   ▲                  │
//	   └──Fail (retry)────┤──Fail (last attempt)──▶ failed
//
// and every step is a compare-and-set on the record's version, so of two replicas racing
// for one record exactly one claims it, and a replica whose claim was taken over (its lease
// ran out) cannot mark the record done or failed. Send creates a record only where none
// exists (version 0): a key sent again while its record is kept is a no-op, which is what
// makes a message sent from every initial add, on every replica and after every restart, go
// out once. Done and failed records are kept for OutboxPolicy.Keep (their TTL), so Keep is
// how long a key is remembered.
//
// A record found claimed after its lease (ClaimedUntil) is an interrupted delivery: the
// replica that claimed it stopped (crash, kill -9, lost Lease) between writing the claim and
// writing the outcome, so the delivery may or may not have happened. Claim then delivers it
// again with Interrupted set (OutboxPolicy.Redeliver: at least once, a receiver deduplicates
// on the key) or marks it failed without delivering (at most once).

// OutboxSuffix names the outbox scope of a script: OutboxScope(script).
const OutboxSuffix = "#outbox"

// OutboxScope is the Scope name of script's outbox.
func OutboxScope(script string) string { return script + OutboxSuffix }

// The states of an outbox record.
const (
	OutboxPending = "pending"
	OutboxClaimed = "claimed"
	OutboxDone    = "done"
	OutboxFailed  = "failed"
)

// OutboxRecord is one message of the outbox as stored (JSON, the value of its key).
type OutboxRecord struct {
	State   string          `json:"state"`
	Message json.RawMessage `json:"message"`
	// About is the object the message is about, for the Event of a failed delivery; optional.
	About *ObjectRef `json:"about,omitempty"`
	// Attempts is how many deliveries were started (claims), the one in progress included.
	Attempts int `json:"attempts"`
	// Interrupted: the latest claim ended without an outcome (see the package comment).
	Interrupted bool `json:"interrupted,omitempty"`
	// Next (pending): unix milliseconds from which the record is due.
	Next int64 `json:"next,omitempty"`
	// ClaimedBy and ClaimedUntil (claimed): the claimant and the end of its lease.
	ClaimedBy    string `json:"claimedBy,omitempty"`
	ClaimedUntil int64  `json:"claimedUntil,omitempty"`
	LastError    string `json:"lastError,omitempty"`
	Sent         int64  `json:"sent"`               // unix milliseconds of Send
	Finished     int64  `json:"finished,omitempty"` // done or failed: unix milliseconds
}

// ObjectRef names a Kubernetes object, for an Event about it.
type ObjectRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	UID        string `json:"uid,omitempty"`
}

// OutboxPolicy is how an outbox retries: zero fields take the defaults below.
type OutboxPolicy struct {
	Attempts   int           // deliveries before the record fails; DefaultOutboxAttempts
	Backoff    time.Duration // wait after the first failure, doubled after each; DefaultOutboxBackoff
	MaxBackoff time.Duration // the longest wait; DefaultOutboxMaxBackoff
	Keep       time.Duration // how long done and failed records are kept; DefaultOutboxKeep
	// Lease is how long a claim holds before another replica takes the record as interrupted:
	// more than a delivery and the write of its outcome can last.
	Lease time.Duration
	// Redeliver: an interrupted delivery is delivered again (at least once); otherwise it
	// fails (at most once).
	Redeliver bool
}

// Defaults of OutboxPolicy.
const (
	DefaultOutboxAttempts   = 10
	DefaultOutboxBackoff    = 5 * time.Second
	DefaultOutboxMaxBackoff = 10 * time.Minute
	DefaultOutboxKeep       = 7 * 24 * time.Hour
	DefaultOutboxLease      = time.Minute
)

func (p OutboxPolicy) withDefaults() OutboxPolicy {
	p.Attempts = orInt(p.Attempts, DefaultOutboxAttempts)
	p.Backoff = orDuration(p.Backoff, DefaultOutboxBackoff)
	p.MaxBackoff = max(orDuration(p.MaxBackoff, DefaultOutboxMaxBackoff), p.Backoff)
	p.Keep = orDuration(p.Keep, DefaultOutboxKeep)
	p.Lease = orDuration(p.Lease, DefaultOutboxLease)
	return p
}

// backoff is the wait after the attempts-th failed delivery: Backoff doubled per earlier
// failure, at most MaxBackoff.
func (p OutboxPolicy) backoff(attempts int) time.Duration {
	d := p.Backoff
	for i := 1; i < attempts && d < p.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, p.MaxBackoff)
}

// outboxHeadroom is what a record may need beyond its message: the state, times, claimant,
// the object it is about and the last error (at most maxOutboxError).
const outboxHeadroom = 2 << 10

// maxOutboxError bounds the last error a record keeps, in bytes.
const maxOutboxError = 1 << 10

// Outbox is one script's outbox. Safe for concurrent use.
type Outbox struct {
	sc     *Scope
	now    func() time.Time
	policy OutboxPolicy
}

// Outbox returns the outbox of the script named script, retrying by policy.
func (s *Store) Outbox(script string, policy OutboxPolicy) *Outbox {
	return &Outbox{sc: s.Scope(OutboxScope(script)), now: s.opts.Now, policy: policy.withDefaults()}
}

// Policy is the outbox's policy with its defaults filled in.
func (o *Outbox) Policy() OutboxPolicy { return o.policy }

// Send records message (JSON) under key as pending, due at once, unless the key has a record
// already (pending, claimed, done or failed): it reports whether it recorded one. When it
// returns true the record is on the API server.
func (o *Outbox) Send(ctx context.Context, key string, message json.RawMessage, about *ObjectRef) (bool, error) {
	// The record grows as it is claimed and failed: leave it the room, or it could not be.
	if n, limit := len(message)+outboxHeadroom, o.sc.st.opts.Limits.MaxValueBytes; n > limit {
		return false, &LimitError{Key: key, Limit: "max-value-bytes", Value: n, Max: limit}
	}
	rec := OutboxRecord{State: OutboxPending, Message: message, About: about, Sent: o.now().UnixMilli()}
	rec.Next = rec.Sent
	_, err := o.put(ctx, key, rec, 0)
	if errors.Is(err, ErrConflict) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("send outbox key %q: %w", key, err)
	}
	return true, nil
}

// put writes rec under key if its version is still expect; done and failed records expire
// after Keep.
func (o *Outbox) put(ctx context.Context, key string, rec OutboxRecord, expect int64) (int64, error) {
	value, err := json.Marshal(rec)
	if err != nil {
		return 0, fmt.Errorf("encode outbox record: %w", err)
	}
	opts := SetOptions{Expect: &expect}
	if rec.State == OutboxDone || rec.State == OutboxFailed {
		opts.TTL = o.policy.Keep
	}
	return o.sc.Set(ctx, key, value, opts)
}

// OutboxEntry is a record with its key and version, as Get and List return it.
type OutboxEntry struct {
	Key     string
	Version int64
	OutboxRecord
}

// due reports whether e may be claimed at now: pending and due, or claimed past its lease.
func (e *OutboxEntry) due(now int64) bool {
	switch e.State {
	case OutboxPending:
		return e.Next <= now
	case OutboxClaimed:
		return e.ClaimedUntil <= now
	}
	return false
}

// when is the time e becomes due; zero when it never will (done, failed).
func (e *OutboxEntry) when() int64 {
	switch e.State {
	case OutboxPending:
		return e.Next
	case OutboxClaimed:
		return e.ClaimedUntil
	}
	return 0
}

// Get returns key's record; false when there is none.
func (o *Outbox) Get(ctx context.Context, key string) (OutboxEntry, bool, error) {
	e, ok, err := o.sc.Get(ctx, key)
	if err != nil || !ok {
		return OutboxEntry{}, false, err
	}
	out, err := decodeRecord(e)
	return out, err == nil, err
}

func decodeRecord(e Entry) (OutboxEntry, error) {
	out := OutboxEntry{Key: e.Key, Version: e.Version}
	if err := json.Unmarshal(e.Value, &out.OutboxRecord); err != nil {
		return out, fmt.Errorf("decode outbox record %q: %w", e.Key, err)
	}
	return out, nil
}

// List returns every record, sorted by key.
func (o *Outbox) List(ctx context.Context) ([]OutboxEntry, error) {
	entries, err := o.sc.List(ctx, "")
	if err != nil {
		return nil, err
	}
	out := make([]OutboxEntry, 0, len(entries))
	for _, e := range entries {
		rec, err := decodeRecord(e)
		if err != nil {
			continue // not a record: someone wrote the scope by hand
		}
		out = append(out, rec)
	}
	return out, nil
}

// OutboxListing is what Due finds in the outbox.
type OutboxListing struct {
	Due    []string       // the keys due now: pending and due, or claimed past their lease
	Next   time.Time      // when the earliest other record becomes due; zero: none will
	Counts map[string]int // records by state
	// Failed are the failed records, the latest first, at most MaxListedFailures.
	Failed []OutboxEntry
}

// MaxListedFailures bounds OutboxListing.Failed.
const MaxListedFailures = 10

// Due lists the records: which are due, when the next is, and the failed ones.
func (o *Outbox) Due(ctx context.Context) (OutboxListing, error) {
	entries, err := o.List(ctx)
	if err != nil {
		return OutboxListing{}, fmt.Errorf("list outbox: %w", err)
	}
	now := o.now().UnixMilli()
	l := OutboxListing{Counts: map[string]int{}}
	var first int64
	for i := range entries {
		e := &entries[i]
		l.Counts[e.State]++
		switch w := e.when(); {
		case e.due(now):
			l.Due = append(l.Due, e.Key)
		case w != 0 && (first == 0 || w < first):
			first = w
		case e.State == OutboxFailed:
			l.Failed = append(l.Failed, *e)
		}
	}
	if first != 0 {
		l.Next = time.UnixMilli(first)
	}
	slices.SortFunc(l.Failed, func(a, b OutboxEntry) int { return cmp.Compare(b.Finished, a.Finished) })
	l.Failed = l.Failed[:min(len(l.Failed), MaxListedFailures)]
	return l, nil
}

// Claim is one delivery of a record: what to deliver, and the version Done and Fail expect.
type Claim struct {
	OutboxEntry
	// Abandoned: the record was interrupted and the policy does not redeliver, or it was
	// interrupted on its last attempt; Claim marked it failed and nothing is to be delivered.
	Abandoned bool
}

// Claim takes key's record for a delivery by claimant, if it is due: it writes the record
// claimed, one attempt more, for the policy's Lease, and returns it; nil when the record is
// absent, not due, or another replica claimed or changed it first. An interrupted record the
// policy does not redeliver (or whose attempts are spent) is marked failed instead, and
// returned with Abandoned set.
func (o *Outbox) Claim(ctx context.Context, key, claimant string) (*Claim, error) {
	e, ok, err := o.Get(ctx, key)
	if err != nil || !ok {
		return nil, err
	}
	now := o.now()
	if !e.due(now.UnixMilli()) {
		return nil, nil
	}
	rec := e.OutboxRecord
	rec.Interrupted = rec.State == OutboxClaimed
	if rec.Interrupted && (!o.policy.Redeliver || rec.Attempts >= o.policy.Attempts) {
		rec.LastError = "interrupted: the runner delivering it stopped before recording the outcome, which is unknown"
		return o.abandon(ctx, e, rec, now)
	}
	rec.State, rec.Attempts = OutboxClaimed, rec.Attempts+1
	rec.ClaimedBy, rec.ClaimedUntil, rec.Next = claimant, now.Add(o.policy.Lease).UnixMilli(), 0
	v, err := o.put(ctx, key, rec, e.Version)
	if errors.Is(err, ErrConflict) {
		return nil, nil // another replica claimed it first
	}
	if err != nil {
		return nil, fmt.Errorf("claim outbox key %q: %w", key, err)
	}
	return &Claim{OutboxEntry: OutboxEntry{Key: key, Version: v, OutboxRecord: rec}}, nil
}

func (o *Outbox) abandon(ctx context.Context, e OutboxEntry, rec OutboxRecord, now time.Time) (*Claim, error) {
	rec.State, rec.Finished, rec.ClaimedUntil = OutboxFailed, now.UnixMilli(), 0
	v, err := o.put(ctx, e.Key, rec, e.Version)
	if errors.Is(err, ErrConflict) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fail outbox key %q: %w", e.Key, err)
	}
	return &Claim{OutboxEntry: OutboxEntry{Key: e.Key, Version: v, OutboxRecord: rec}, Abandoned: true}, nil
}

// ErrClaimLost is Done's and Fail's error when the record changed since the claim: the
// claim's lease ran out and another replica took the record over.
var ErrClaimLost = errors.New("the claim was taken over after its lease ran out")

// Done records c's delivery as done.
func (o *Outbox) Done(ctx context.Context, c *Claim) error {
	rec := c.OutboxRecord
	rec.State, rec.Finished, rec.ClaimedUntil, rec.LastError = OutboxDone, o.now().UnixMilli(), 0, ""
	return o.finish(ctx, c, rec)
}

// Fail records c's delivery as failed with cause: pending again after the policy's backoff,
// or failed for good (final) when its attempts are spent or giveUp says so (a delivery whose
// outcome is unknown, under a policy that does not redeliver).
func (o *Outbox) Fail(ctx context.Context, c *Claim, cause string, giveUp bool) (final bool, next time.Time, err error) {
	rec := c.OutboxRecord
	now := o.now()
	rec.LastError, rec.ClaimedUntil = truncate(cause, maxOutboxError), 0
	if giveUp || rec.Attempts >= o.policy.Attempts {
		rec.State, rec.Finished = OutboxFailed, now.UnixMilli()
	} else {
		next = now.Add(o.policy.backoff(rec.Attempts))
		rec.State, rec.Next = OutboxPending, next.UnixMilli()
	}
	return rec.State == OutboxFailed, next, o.finish(ctx, c, rec)
}

func (o *Outbox) finish(ctx context.Context, c *Claim, rec OutboxRecord) error {
	_, err := o.put(ctx, c.Key, rec, c.Version)
	if errors.Is(err, ErrConflict) {
		return fmt.Errorf("record outbox key %q as %s: %w", c.Key, rec.State, ErrClaimLost)
	}
	if err != nil {
		return fmt.Errorf("record outbox key %q as %s: %w", c.Key, rec.State, err)
	}
	return nil
}

// truncate cuts s to at most n bytes, on a rune boundary, marking the cut with "…".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
