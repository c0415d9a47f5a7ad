package admission

import (
	"context"
	"errors"
	"fmt"

	"github.com/jsinformer/jsinformer/scripting"
)

// Resolving the names of a path to the scripts that answer. Replicas need not have loaded the
// same scripts (a script that fails to load on one, a rollout adding one): an entry shared by
// several scripts may name one this replica has not loaded. Skipping it would allow what it
// would have denied; instead it answers by the failure policy its entry was registered with,
// which the path carries (GroupPath).

// ErrNotLoaded is wrapped by the error a shared entry's script answers with on a replica that
// has not loaded it.
var ErrNotLoaded = errors.New("not loaded on this replica")

// resolve returns the scripts answering for names, in their order: those loaded that define
// kind, and for each name not loaded a notLoaded script answering by policy (the entry's
// failure policy; when the path carries none, the first loaded script's, which the entry
// shared). found counts the loaded ones; with none, nothing answers (the caller refuses).
func resolve(lookup Lookup, kind string, names []string, policy string) (scripts []Script, found int) {
	missing := false
	for _, name := range names {
		script, ok := lookup(name)
		switch {
		case !ok:
			missing = true
			scripts = append(scripts, notLoaded{name: name})
		case script.Defines(kind):
			found++
			scripts = append(scripts, script)
		}
	}
	if found == 0 || !missing {
		return loadedOnly(scripts), found
	}
	if policy == "" {
		policy = firstLoaded(scripts).Spec().FailurePolicy
	}
	for i, s := range scripts {
		if n, ok := s.(notLoaded); ok {
			n.policy = policy
			scripts[i] = n
		}
	}
	return scripts, found
}

func loadedOnly(scripts []Script) []Script {
	out := scripts[:0]
	for _, s := range scripts {
		if _, ok := s.(notLoaded); !ok {
			out = append(out, s)
		}
	}
	return out
}

func firstLoaded(scripts []Script) Script {
	for _, s := range scripts {
		if _, ok := s.(notLoaded); !ok {
			return s
		}
	}
	return nil
}

// notLoaded stands for a script of a shared entry that this replica has not loaded: every
// call fails with ErrNotLoaded, which its failure policy answers (Fail denies, Ignore allows
// with a warning). Its spec has no timeout: it does not shorten the request's (Deadline).
type notLoaded struct {
	name   string
	policy string
}

func (n notLoaded) Name() string        { return n.name }
func (n notLoaded) Defines(string) bool { return true }

func (n notLoaded) Spec() scripting.AdmissionSpec {
	return scripting.AdmissionSpec{FailurePolicy: n.policy, Mode: scripting.ModeEnforce}
}

func (n notLoaded) Validate(context.Context, scripting.AdmissionRequest) (scripting.Validation, error) {
	return scripting.Validation{}, n.err()
}

func (n notLoaded) Mutate(context.Context, scripting.AdmissionRequest) (scripting.Object, error) {
	return nil, n.err()
}

func (n notLoaded) err() error {
	return fmt.Errorf("the script is %w", ErrNotLoaded)
}
