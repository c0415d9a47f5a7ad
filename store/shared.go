package store

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Shared namespaces: a store that several scripts use together. A script's own store is
// reachable only by that script (Scope takes its name); a shared namespace is reachable by
// every script that declares it (the engine checks the declaration, package scripting's
// `store: { shared: [...] }`), so two scripts share keys only when both say so. A shared
// namespace's ConfigMaps are named jsinformer-store-shared-<name>-<hash>-<n> and carry
// AnnotationShared instead of AnnotationScript; its ID is a hash of a string no script name
// can be, so a script named like a shared namespace never reaches it.

// sharedPrefix starts the key of a shared namespace in Store.scopes and in its ID's hash: a
// NUL never occurs in a script's name (a path).
const sharedPrefix = "\x00shared/"

// Shared returns the store of the shared namespace name, the same *Scope for the same name.
// The caller checks that name is valid (ValidSharedName) and declared.
func (s *Store) Shared(name string) *Scope {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.scopes[sharedPrefix+name]
	if sc == nil {
		sc = newScope(s, name, true)
		s.scopes[sharedPrefix+name] = sc
	}
	return sc
}

// ValidSharedName refuses a shared namespace name that is not a DNS label (lower-case
// letters, digits and '-', at most 63 characters), so that it reads the same in a ConfigMap's
// name, a flag and a script.
func ValidSharedName(name string) error {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("shared store namespace %q: %s", name, strings.Join(errs, "; "))
	}
	return nil
}

// ScriptID is the ID (label LabelScript) of the script named script's ConfigMaps.
func ScriptID(script string) string { return scriptID(script) }

// SharedID is the ID (label LabelScript) of the shared namespace name's ConfigMaps.
func SharedID(name string) string { return scriptID(sharedPrefix + name) }

// ownerID is ScriptID or SharedID.
func ownerID(name string, shared bool) string {
	if shared {
		return SharedID(name)
	}
	return ScriptID(name)
}

// annotation is the annotation naming the scope's owner on its ConfigMaps.
func (sc *Scope) annotation() string {
	if sc.shared {
		return AnnotationShared
	}
	return AnnotationScript
}
