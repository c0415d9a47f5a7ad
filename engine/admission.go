package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine/internal/version"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/scripting"
)

// Admission: which version serves each script's validate and mutate. The loader publishes a
// new table (copy on write) whenever that changes: a version becomes current (onSynced), a
// script is unloaded, the memory guard stops one. Any goroutine reads it: the admission
// server on every request, the webhook registration on Config.OnAdmission.

// ErrNotServing is returned when no loaded version of the script serves admission (not
// loaded yet, removed, or without validate and mutate).
var ErrNotServing = errors.New("script does not serve admission")

// ErrStopped is returned when the memory guard stopped the script; its admission requests
// answer by its failure policy until its file changes.
var ErrStopped = errors.New("script stopped by the memory guard")

// admissionSlot is one script's entry: the version serving it, or the stopped version.
type admissionSlot struct {
	ver     *version.Version
	stopped bool
}

type admissionTable map[string]admissionSlot

// publishAdmission recomputes name's slot after the loader changed its plugin (stopped tells
// that the memory guard stopped the version serving) and tells Config.OnAdmission when it
// changed. Loader goroutine only.
func (e *Engine) publishAdmission(name string, stopped bool) {
	defer e.audits.Load().update(name, e.plugins[name], stopped)
	old := e.admissionTable()
	slot, had := old[name]
	switch p := e.plugins[name]; {
	case stopped && had:
		slot.stopped = true
	case p != nil && p.current != nil && admits(p.current.ver.Definition()):
		slot = admissionSlot{ver: p.current.ver}
		if slot != old[name] {
			e.warnInheritedSelector(name, p.current.ver.Definition())
		}
	default:
		if !had {
			return
		}
		slot = admissionSlot{}
	}
	if had && slot == old[name] {
		return
	}
	next := maps.Clone(old)
	if next == nil {
		next = admissionTable{}
	}
	if slot.ver == nil {
		delete(next, name)
	} else {
		next[name] = slot
	}
	e.admission.Store(&next)
	if e.cfg.OnAdmission != nil {
		e.cfg.OnAdmission()
	}
}

func admits(def scripting.Definition) bool { return def.Validate || def.Mutate }

// warnInheritedSelector warns, as a version of name starts serving admission, when one of its
// watches takes the runner-wide -l: its webhook entry then has that selector as its
// objectSelector, and an object without those labels never reaches validate or mutate: a
// client bypasses the policy by leaving the labels out (docs/admission.md, "Selectors").
func (e *Engine) warnInheritedSelector(name string, def scripting.Definition) {
	if e.cfg.LabelSelector == "" {
		return
	}
	for _, w := range def.Watch {
		if w.LabelSelector == "" {
			e.logger.Warn("admission: the runner-wide -l is this script's objectSelector; objects without those labels skip its "+
				"validate and mutate (set labelSelector in its watch to make that the policy's own choice, or run admission without -l)",
				"script", name, "selector", e.cfg.LabelSelector)
			return
		}
	}
}

func (e *Engine) admissionTable() admissionTable {
	if t := e.admission.Load(); t != nil {
		return *t
	}
	return nil
}

// AdmissionEntry is one script serving admission, as its version serving defines it: what the
// webhook registration derives its entries from.
type AdmissionEntry struct {
	Script, Hash     string
	Validate, Mutate bool
	Spec             scripting.AdmissionSpec
	Watches          []AdmissionWatch
	Stopped          bool // by the memory guard: requests answer by the failure policy
}

// AdmissionWatch is one resolved watch of an admission script: the webhook rule's resource
// and scope, and the selectors its entry applies.
type AdmissionWatch struct {
	Resource      dynamicinformer.Resource
	Namespace     string
	LabelSelector string
}

// Selectors are the namespaces and label selector an entry's webhooks apply, from its
// watches: namespaces nil when one watch takes every namespace or a cluster-scoped resource;
// labelSelector the watches' selector when they all share one, else "" (every object).
func (a AdmissionEntry) Selectors() (namespaces []string, labelSelector string) {
	selectors := map[string]bool{}
	allNamespaces := false
	for _, w := range a.Watches {
		if !w.Resource.Namespaced || w.Namespace == "" {
			allNamespaces = true
		} else if !slices.Contains(namespaces, w.Namespace) {
			namespaces = append(namespaces, w.Namespace)
		}
		selectors[w.LabelSelector] = true
	}
	if allNamespaces {
		namespaces = nil
	}
	if len(selectors) == 1 {
		for sel := range selectors {
			labelSelector = sel
		}
	}
	return namespaces, labelSelector
}

// AdmissionEntries lists the scripts serving admission, sorted by name. Safe from any goroutine.
func (e *Engine) AdmissionEntries() []AdmissionEntry {
	t := e.admissionTable()
	out := make([]AdmissionEntry, 0, len(t))
	for _, name := range slices.Sorted(maps.Keys(t)) {
		slot := t[name]
		def := slot.ver.Definition()
		entry := AdmissionEntry{Script: name, Hash: slot.ver.Hash(), Validate: def.Validate, Mutate: def.Mutate,
			Spec: def.Admission, Stopped: slot.stopped}
		for _, target := range slot.ver.Targets() {
			entry.Watches = append(entry.Watches, AdmissionWatch{Resource: target.Resource,
				Namespace: target.Key.Namespace, LabelSelector: target.Key.LabelSelector})
		}
		out = append(out, entry)
	}
	return out
}

// AdmissionScript is a script's admission functions as the engine serves them: each call
// goes to the version serving the script at that moment.
type AdmissionScript struct {
	e                *Engine
	name             string
	spec             scripting.AdmissionSpec
	validate, mutate bool
}

// AdmissionScript returns the admission functions of the script named name, false when no
// version of it serves admission. Safe from any goroutine.
func (e *Engine) AdmissionScript(name string) (AdmissionScript, bool) {
	slot, ok := e.admissionTable()[name]
	if !ok {
		return AdmissionScript{}, false
	}
	def := slot.ver.Definition()
	return AdmissionScript{e: e, name: name, spec: def.Admission, validate: def.Validate, mutate: def.Mutate}, true
}

// Defines reports whether the script defines validate (kind "validate") or mutate ("mutate").
func (a AdmissionScript) Defines(kind string) bool {
	return (kind == "validate" && a.validate) || (kind == "mutate" && a.mutate)
}

// Name is the script's name.
func (a AdmissionScript) Name() string { return a.name }

// Spec is the script's admission options, as its version serving when looked up says.
func (a AdmissionScript) Spec() scripting.AdmissionSpec { return a.spec }

// Validate calls the script's validate on the version serving it, within ctx.
func (a AdmissionScript) Validate(ctx context.Context, req scripting.AdmissionRequest) (scripting.Validation, error) {
	var res scripting.Validation
	err := a.onServing(func(v *version.Version) (err error) {
		res, err = v.Validate(ctx, req)
		return err
	})
	return res, err
}

// Mutate calls the script's mutate on the version serving it, within ctx.
func (a AdmissionScript) Mutate(ctx context.Context, req scripting.AdmissionRequest) (scripting.Object, error) {
	var out scripting.Object
	err := a.onServing(func(v *version.Version) (err error) {
		out, err = v.Mutate(ctx, req)
		return err
	})
	return out, err
}

// Covers reports whether the script's webhook entry is registered for resource and
// subResource: one of the resources its serving version watches (AdmissionEntries' rules),
// with a subresource only when its admission.subresources lists it (or "*"). A script no longer serving covers all: its call then fails as
// Validate and Mutate say, and its failure policy answers.
func (a AdmissionScript) Covers(resource schema.GroupVersionResource, subResource string) bool {
	slot, ok := a.e.admissionTable()[a.name]
	if !ok {
		return true
	}
	if subs := a.spec.Subresources; subResource != "" && !slices.Contains(subs, subResource) && !slices.Contains(subs, "*") {
		return false
	}
	for _, t := range slot.ver.Targets() {
		if t.Resource.GVR == resource {
			return true
		}
	}
	return false
}

// retiredRetries bounds how often a call follows a reload: a version retired between the
// lookup and the call hands it to its successor, published before it was retired.
const retiredRetries = 3

// onServing runs call on the version serving the script, again on its successor when the
// version retired in between.
func (a AdmissionScript) onServing(call func(*version.Version) error) error {
	for range retiredRetries {
		slot, ok := a.e.admissionTable()[a.name]
		switch {
		case !ok:
			return fmt.Errorf("call %s: %w", a.name, ErrNotServing)
		case slot.stopped:
			return fmt.Errorf("call %s: %w", a.name, ErrStopped)
		}
		if err := call(slot.ver); !errors.Is(err, version.ErrRetired) {
			return err
		}
	}
	return fmt.Errorf("call %s: %w", a.name, version.ErrRetired)
}

// RecordAdmission keeps rec, an admission decision (Event "admission"), in the trace with the
// object's other records, for Explain and Subscribe; its Version is the script's version
// serving admission now (the one that answered, unless a reload came in between). Nothing is
// kept with recording off. Safe from any goroutine; it never blocks on a tail subscriber.
func (e *Engine) RecordAdmission(rec inspection.TraceRecord) {
	if e.trace == nil {
		return
	}
	if slot, ok := e.admissionTable()[rec.Script]; ok {
		rec.Version = slot.ver.Hash()
	}
	e.trace.Record(rec)
}
