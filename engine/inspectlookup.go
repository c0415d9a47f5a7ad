package engine

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/jsinformer/jsinformer/internal/editdistance"
)

// Lookups shared by the inspection methods: the live versions (from needs, which the loader
// keeps under its own mutex), and clear errors with suggestions for names that match nothing.

// versions lists the live versions (syncing, current, or draining not yet removed), sorted by
// script name, the serving one of a script first.
func (n *needs) versions() []*version {
	n.mu.Lock()
	out := make([]*version, 0, len(n.byVersion))
	for v := range n.byVersion {
		out = append(out, v)
	}
	n.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].name != out[j].name {
			return out[i].name < out[j].name
		}
		return out[i].currentState() > out[j].currentState() // current before syncing
	})
	return out
}

// scriptNames are the scripts with a live version, sorted.
func (e *Engine) scriptNames() []string {
	var out []string
	for _, v := range e.needs.versions() {
		if !slices.Contains(out, v.name) {
			out = append(out, v.name)
		}
	}
	return out
}

// servingVersion is the version serving script, or an error saying why there is none.
func (e *Engine) servingVersion(script string) (*version, error) {
	var syncing bool
	for _, v := range e.needs.versions() {
		if v.name != script {
			continue
		}
		if v.currentState() == stateCurrent {
			return v, nil
		}
		syncing = true
	}
	if syncing {
		return nil, fmt.Errorf("script %s: %w: its first version is still syncing", script, ErrNotFound)
	}
	return nil, fmt.Errorf("script %s: %w: no such script is loaded%s", script, ErrNotFound, suggest(script, e.scriptNames()))
}

// subscriptionOf is v's subscription to resource (as users name it).
func (e *Engine) subscriptionOf(v *version, resource string) (*subscription, error) {
	res, err := e.resolver.Resolve(resource)
	if err != nil {
		return nil, fmt.Errorf("resource %s: %w: %w", resource, ErrNotFound, err)
	}
	var watched []string
	for _, sub := range v.subscriptions() {
		if sub.cache.Resource == res.String() {
			return sub, nil
		}
		watched = append(watched, sub.cache.Resource)
	}
	return nil, fmt.Errorf("script %s: %w: it does not watch %s (it watches %s)", v.name, ErrNotFound, res, strings.Join(watched, ", "))
}

// subscriptions are v's subscriptions once subscribed; nil before.
func (v *version) subscriptions() []*subscription {
	if v.insp == nil {
		return nil
	}
	if p := v.insp.subs.Load(); p != nil {
		return *p
	}
	return nil
}

// suggest is ` (did you mean "x"?)` for the closest of names, or `; known: a, b` when none is
// close, or "" when there are no names.
func suggest(want string, names []string) string {
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
