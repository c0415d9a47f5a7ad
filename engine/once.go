package engine

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jsinformer/jsinformer/engine/internal/version"
	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/store"
)

// The outbox's engine side (docs/once.md): each version's ctx.outbox.send goes to its
// script's outbox in the store (package store's Outbox), and a serving version delivers from
// it (package engine/internal/version, outbox.go). Nothing without a store.

// outboxStoreTimeout bounds each store call of a delivery: a claim, a done or failed record.
const outboxStoreTimeout = 2 * store.DefaultRequestTimeout

// scriptOutbox is ctx.outbox.send's backend for one version of script, and the poke that
// tells that version, once it serves, of each message sent; nil and nil without a store.
func (e *Engine) scriptOutbox(script string) (scripting.Outbox, *version.OutboxPoke) {
	if e.store == nil {
		return nil, nil
	}
	poke := &version.OutboxPoke{}
	return outboxSender{box: e.store.Outbox(script, store.OutboxPolicy{}), poke: poke}, poke
}

// outboxConfig is what a version of script delivers with, nil when the definition declares
// no outbox or there is no store. Failure Events go through client, the script's.
func (e *Engine) outboxConfig(script string, def scripting.Definition, poke *version.OutboxPoke, client scripting.Client) *version.OutboxConfig {
	if e.store == nil || def.Outbox == nil {
		return nil
	}
	spec := def.Outbox
	policy := store.OutboxPolicy{Attempts: spec.Attempts, Backoff: spec.Backoff, MaxBackoff: spec.MaxBackoff,
		Keep: spec.Keep, Lease: e.outboxLease(), Redeliver: !spec.AtMostOnce}
	cfg := &version.OutboxConfig{Box: e.store.Outbox(script, policy), Poke: poke, Claimant: claimant(),
		Metrics: e.outboxMetrics, Timeout: outboxStoreTimeout}
	if client != nil {
		cfg.Event = func(ctx context.Context, about scripting.Object, reason, message string) error {
			return client.Event(ctx, about, "Warning", reason, message)
		}
	}
	return cfg
}

// outboxLease is how long a claim holds (Config.OutboxLease): by default longer than a
// delivery can last (the handler timeout and its grace) plus its claim and outcome writes.
func (e *Engine) outboxLease() time.Duration {
	if e.cfg.OutboxLease > 0 {
		return e.cfg.OutboxLease
	}
	return e.cfg.HandlerTimeout + scripting.DefaultGrace + 2*outboxStoreTimeout
}

// claimant names this process in the records it claims: host name and process ID.
func claimant() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d", host, os.Getpid())
}

// outboxSender adapts a store outbox to scripting.Outbox, and pokes the version on each send.
type outboxSender struct {
	box  *store.Outbox
	poke *version.OutboxPoke
}

func (s outboxSender) Send(ctx context.Context, key string, message []byte, about *scripting.ObjectRef) (bool, error) {
	var ref *store.ObjectRef
	if about != nil {
		ref = &store.ObjectRef{APIVersion: about.APIVersion, Kind: about.Kind, Namespace: about.Namespace, Name: about.Name, UID: about.UID}
	}
	sent, err := s.box.Send(ctx, key, message, ref)
	if sent {
		s.poke.Sent(key)
	}
	return sent, err
}
