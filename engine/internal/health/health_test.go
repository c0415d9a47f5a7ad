package health_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine/internal/health"
)

var (
	secrets    = dynamicinformer.Key{GVR: schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, Namespace: "ns"}
	configmaps = dynamicinformer.Key{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: "ns"}
)

// world is what the engine would hand the health: live versions' keys and informers' health.
type world struct {
	loaded    bool
	users     map[dynamicinformer.Key][]string // key → scripts using it
	informers []dynamicinformer.Health
	syncing   []health.Syncing
}

func (w world) health(limit time.Duration, logger *slog.Logger, changed func()) *health.Health {
	return health.New(health.Config{
		UnhealthyAfter: limit, Logger: logger,
		Loaded:    func() bool { return w.loaded },
		Informers: func() []dynamicinformer.Health { return w.informers },
		Scripts:   func(k dynamicinformer.Key) []string { return w.users[k] },
		InUse: func() map[dynamicinformer.Key]bool {
			out := map[dynamicinformer.Key]bool{}
			for k := range w.users {
				out[k] = true
			}
			return out
		},
		Syncing: func() []health.Syncing { return w.syncing },
		Changed: changed,
	})
}

func TestReady(t *testing.T) {
	t.Parallel()
	const limit = 30 * time.Second
	longAgo, justNow := time.Now().Add(-time.Minute), time.Now().Add(-time.Second)
	failing := func(k dynamicinformer.Key, since time.Time) dynamicinformer.Health {
		return dynamicinformer.Health{Key: k, FailingSince: since, LastError: "forbidden"}
	}
	cases := []struct {
		name  string
		world world
		want  []string // substrings of the error, in order; nil: ready
	}{
		{"initial scripts loading", world{}, []string{"the initial scripts are still loading"}},
		{"all healthy", world{loaded: true, users: map[dynamicinformer.Key][]string{configmaps: {"a.js"}},
			informers: []dynamicinformer.Health{{Key: configmaps, Healthy: true}}}, nil},
		{"failing but not for long", world{loaded: true, users: map[dynamicinformer.Key][]string{secrets: {"s.js"}},
			informers: []dynamicinformer.Health{failing(secrets, justNow)}}, nil},
		{"failing for long, in use", world{loaded: true, users: map[dynamicinformer.Key][]string{secrets: {"a.js", "s.js"}},
			informers: []dynamicinformer.Health{failing(secrets, longAgo)}},
			[]string{"informer v1/secrets namespace=ns cannot list/watch for 1m0s (scripts a.js, s.js): forbidden"}},
		{"failing for long, no longer used", world{loaded: true, informers: []dynamicinformer.Health{failing(secrets, longAgo)}}, nil},
		{"a version syncing for long, and a failing informer: sorted", world{loaded: true,
			users:     map[dynamicinformer.Key][]string{secrets: {"s.js"}},
			informers: []dynamicinformer.Health{failing(secrets, longAgo)},
			syncing:   []health.Syncing{{Script: "s.js", Since: longAgo}, {Script: "new.js", Since: justNow}}},
			[]string{"informer v1/secrets", "; script s.js has not synced after 1m0s"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := c.world.health(limit, slog.New(slog.DiscardHandler), func() {}).Ready()
			if c.want == nil {
				if err != nil {
					t.Fatalf("Ready() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, health.ErrNotReady) {
				t.Fatalf("Ready() = %v, want ErrNotReady", err)
			}
			rest := err.Error()
			for _, w := range c.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("Ready() = %v; want %q (in this order)", err, w)
				}
				rest = rest[i+len(w):]
			}
			if strings.Contains(err.Error(), "new.js") {
				t.Errorf("Ready() = %v; names a version syncing for less than the limit", err)
			}
		})
	}
}

// records keeps what Report logs.
type records struct {
	mu  sync.Mutex
	all []slog.Record
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, rec)
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

// forbidden is the API server's answer to a list the runner may not make.
var forbidden = apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "",
	errors.New(`user "system:serviceaccount:ops:runner" cannot list resource "secrets" in API group "" in the namespace "ns"`))

// Report's lines are the operator's contract: level, message, and the scripts concerned.
func TestReportNamesTheScripts(t *testing.T) {
	t.Parallel()
	w := world{loaded: true, users: map[dynamicinformer.Key][]string{secrets: {"a.js", "s.js"}}}
	cases := []struct {
		ev    dynamicinformer.HealthEvent
		level slog.Level
		msg   string
	}{
		{dynamicinformer.HealthEvent{Kind: dynamicinformer.Failing, Key: secrets, Err: fmt.Errorf("forbidden")},
			slog.LevelWarn, "informer cannot list/watch; its scripts see no changes until it recovers"},
		{dynamicinformer.HealthEvent{Kind: dynamicinformer.StillFailing, Key: secrets, Err: fmt.Errorf("forbidden"), Since: time.Now()},
			slog.LevelWarn, "informer still cannot list/watch"},
		{dynamicinformer.HealthEvent{Kind: dynamicinformer.Recovered, Key: secrets, Down: time.Second, Relisted: true},
			slog.LevelInfo, "informer recovered"},
		// A Forbidden is said once, with the rule to add; its reminders are DEBUG.
		{dynamicinformer.HealthEvent{Kind: dynamicinformer.Failing, Key: secrets, Err: forbidden},
			slog.LevelWarn, "informer may not list/watch: the runner lacks a permission; its scripts start once it is granted"},
		{dynamicinformer.HealthEvent{Kind: dynamicinformer.StillFailing, Key: secrets, Err: forbidden, Since: time.Now()},
			slog.LevelDebug, "informer still may not list/watch"},
	}
	for _, c := range cases {
		t.Run(c.msg, func(t *testing.T) {
			t.Parallel()
			logged := &records{}
			changes := 0
			w.health(time.Second, slog.New(logged), func() { changes++ }).Report(c.ev)
			if len(logged.all) != 1 || changes != 1 {
				t.Fatalf("logged %d lines and told %d changes, want 1 and 1", len(logged.all), changes)
			}
			rec := logged.all[0]
			attrs := map[string]string{}
			rec.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.String(); return true })
			if rec.Level != c.level || rec.Message != c.msg || attrs["scripts"] != "a.js,s.js" || attrs["resource"] != "v1/secrets" {
				t.Errorf("logged %s %q %v; want %s %q with scripts=a.js,s.js resource=v1/secrets", rec.Level, rec.Message, attrs, c.level, c.msg)
			}
			if errors.Is(c.ev.Err, forbidden) && (attrs["verb"] != "list" || attrs["grant"] != "kubectl create role NAME -n ns --verb=list,watch --resource=secrets") {
				t.Errorf("logged %v; want verb=list and the rule to add", attrs)
			}
		})
	}
}
