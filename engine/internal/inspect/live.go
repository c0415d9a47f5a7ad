package inspect

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/internal/editdistance"
	"github.com/jsinformer/jsinformer/internal/scriptcache"
)

// Live is what the inspection API reads of one live script version (syncing, current, or
// draining not yet removed) and asks of it; package engine/internal/version's Version implements it. Every
// method is safe from any goroutine (the store is read under its own locks, the rest are
// atomics or fixed at build), except Replay, which runs on the version's worker only.
type Live interface {
	Script() string
	Hash() string
	// State is "syncing", "current" or "draining".
	State() string
	// Backlog is how many events wait for the handler worker (index stage and an event held
	// for a pause included).
	Backlog() int
	// InFlight is the worker's call running now, nil between calls.
	InFlight() *inspection.CallInFlight
	// Book is the book of its reconcile keys, nil when the script does not reconcile;
	// Reconciled is the resource those keys name (canonical).
	Book() *KeyBook
	Reconciled() string
	// Store is the version's cache and indexes; Indexers names its index functions.
	Store() *scriptcache.Store
	Indexers() []string
	// Watches are its resolved watches, once subscribed (nil before).
	Watches() []Watch

	// Requeue forgets key's reconcile backoff and queues it now for reason (the version
	// reconciles).
	Requeue(key, reason string)
	// Do queues fn to run on the version's worker after the events queued before it; false
	// when the version is stopping (fn will not run). Done is closed once the worker has
	// returned: a fn not run by then never runs.
	Do(fn func()) bool
	Done() <-chan struct{}
	// Replay calls the handler again with the cached object key of w's resource: onAdd, or
	// onUpdate(obj, obj) for a script without onAdd; with dryRun its writes go with
	// dryRun=All. On the worker only (through Do).
	Replay(w Watch, key string, dryRun bool) (inspection.TraceRecord, error)
}

// Watch is one resolved watch of a live version.
type Watch struct {
	Resource dynamicinformer.Resource
	Key      dynamicinformer.Key
}

// ScriptNames are the scripts with a live version, sorted as live is.
func ScriptNames(live []Live) []string {
	var out []string
	for _, v := range live {
		if !slices.Contains(out, v.Script()) {
			out = append(out, v.Script())
		}
	}
	return out
}

// Serving is the version of live serving script, or an error saying why there is none.
func Serving(live []Live, script string) (Live, error) {
	var syncing bool
	for _, v := range live {
		if v.Script() != script {
			continue
		}
		if v.State() == "current" {
			return v, nil
		}
		syncing = true
	}
	if syncing {
		return nil, fmt.Errorf("script %s: %w: its first version is still syncing", script, inspection.ErrNotFound)
	}
	return nil, fmt.Errorf("script %s: %w: no such script is loaded%s", script, inspection.ErrNotFound, Suggest(script, ScriptNames(live)))
}

// WatchOf is v's watch of res (canonical spelling), or an error naming what v watches.
func WatchOf(v Live, res dynamicinformer.Resource) (Watch, error) {
	var watched []string
	for _, w := range v.Watches() {
		if w.Resource.String() == res.String() {
			return w, nil
		}
		watched = append(watched, w.Resource.String())
	}
	return Watch{}, fmt.Errorf("script %s: %w: it does not watch %s (it watches %s)", v.Script(), inspection.ErrNotFound, res, strings.Join(watched, ", "))
}

// watches reports whether v watches resource (canonical spelling).
func watches(v Live, resource string) bool {
	return slices.ContainsFunc(v.Watches(), func(w Watch) bool { return w.Resource.String() == resource })
}

// SplitKey checks key against the resource's scope.
func SplitKey(res dynamicinformer.Resource, key string) (ns, name string, err error) {
	ns, name, found := strings.Cut(key, "/")
	switch {
	case res.Namespaced && (!found || ns == "" || name == ""):
		return "", "", fmt.Errorf("object %q: %w: %s is namespaced: name it NAMESPACE/NAME", key, inspection.ErrInvalid, res)
	case !res.Namespaced && found:
		return "", "", fmt.Errorf("object %q: %w: %s is cluster-scoped: name it NAME, without a namespace", key, inspection.ErrInvalid, res)
	case !res.Namespaced:
		return "", key, nil
	}
	return ns, name, nil
}

// Suggest is ` (did you mean "x"?)` for the closest of names, or `; known: a, b` when none is
// close, or "" when there are no names.
func Suggest(want string, names []string) string {
	if len(names) == 0 {
		return ""
	}
	best, bestDist := "", len(want)/2+2
	for _, n := range names {
		if d := editdistance.Levenshtein(strings.ToLower(want), strings.ToLower(n)); d < bestDist {
			best, bestDist = n, d
		}
	}
	if best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	if len(names) > 10 {
		names = append(names[:10:10], "…")
	}
	return "; known: " + strings.Join(names, ", ")
}

func dedupe(names []string) []string {
	slices.Sort(names)
	return slices.Compact(names)
}
