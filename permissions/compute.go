package permissions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/internal/memcluster"
	"github.com/jsinformer/jsinformer/plugins"
	"github.com/jsinformer/jsinformer/scripting"
)

// Options says what to compute the needs of.
type Options struct {
	// Dir is the scripts folder.
	Dir string
	// Defaults are the watches of scripts without their own (--gvr), Namespace the runner's -n
	// ("" for every namespace).
	Defaults  []scripting.WatchSpec
	Namespace string
	// Resolver resolves resource names; nil means Offline().
	Resolver Resolver
	Runner   Runner
	// Admission is how the runner serves the scripts' validate and mutate.
	Admission Admission
	// Timeout bounds each script's top-level evaluation; zero is scripting's default.
	Timeout time.Duration
}

// Report is what a scripts folder needs.
type Report struct {
	Scripts []string // the plugins, sorted
	Needs   []Need   // sorted (see Sort)
	Dynamic []Dynamic
	// Admission are the scripts with validate or mutate, sorted; Unwatched those of them
	// that need no informer of their watches (scripting.NeedsInformers).
	Admission []string
	Unwatched []string
	// Net are the scripts' `net` declarations: the --allow-net entries each may reach.
	Net []NetDeclaration
}

// NetDeclaration is one script's `net`: the --allow-net entries it may reach, all of which
// the runner's --allow-net must hold for the script to reach them.
type NetDeclaration struct {
	Script  string
	Entries []string
}

// AllowNet is every entry of the scripts' `net` declarations, sorted and unique: what the
// runner's --allow-net must hold.
func (r *Report) AllowNet() []string {
	var out []string
	for _, d := range r.Net {
		out = append(out, d.Entries...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Compute loads every plugin of a scripts folder, as the runner would find them, and computes
// what the folder needs: per script, its watches, the k8s calls in its source and its
// declared permissions; and the runner's own needs. A script that does not load, or a resource
// that does not resolve, is an error: the answer would be incomplete.
func Compute(ctx context.Context, opts Options) (*Report, error) {
	if opts.Resolver == nil {
		r, err := Offline()
		if err != nil {
			return nil, err
		}
		opts.Resolver = r
	}
	sources, err := scan(ctx, opts.Dir)
	if err != nil {
		return nil, err
	}
	rep := &Report{Needs: opts.Runner.Needs()}
	var errs []error
	for _, src := range sources {
		if err := rep.add(opts, src); err != nil {
			errs = append(errs, err)
		}
	}
	Sort(rep.Needs)
	return rep, errors.Join(errs...)
}

// add loads one plugin and adds what it needs.
func (r *Report) add(opts Options, src plugins.Source) error {
	prg, def, err := loadScript(opts, src)
	if err != nil {
		return err
	}
	needs, dyn, err := Script(prg, def, opts.Defaults, opts.Namespace, opts.Resolver, opts.Admission)
	if err != nil {
		return err
	}
	r.Scripts = append(r.Scripts, src.Name)
	r.Needs = append(r.Needs, needs...)
	r.Dynamic = append(r.Dynamic, dyn...)
	if def.Validate || def.Mutate {
		r.Admission = append(r.Admission, src.Name)
		if !scripting.NeedsInformers(prg, def) {
			r.Unwatched = append(r.Unwatched, src.Name)
		}
	}
	if len(def.Net) > 0 {
		r.Net = append(r.Net, NetDeclaration{Script: src.Name, Entries: slices.Clone(def.Net)})
	}
	return nil
}

// loadScript compiles and instantiates one plugin, without a client, to read its definition.
func loadScript(opts Options, src plugins.Source) (*scripting.Program, scripting.Definition, error) {
	prg, err := scripting.CompileIn(opts.Dir, src.Name, src.Content)
	if err != nil {
		return nil, scripting.Definition{}, fmt.Errorf("load %s: %w", src.Name, err)
	}
	s, err := prg.Instantiate(scripting.Options{Timeout: opts.Timeout})
	if err != nil {
		return nil, scripting.Definition{}, fmt.Errorf("load %s: %w", src.Name, err)
	}
	def := s.Definition()
	s.Close()
	return prg, def, nil
}

// scan lists the plugins of dir as the runner's folder watcher finds them: modules and test
// files excluded. The watcher's goroutine is this function's and has ended when it returns.
func scan(ctx context.Context, dir string) ([]plugins.Source, error) {
	return plugins.Scan(ctx, dir, plugins.Options{Imports: scripting.Imports, Logger: slog.New(slog.DiscardHandler)})
}

// Offline resolves names without a cluster: the built-in resources of kube-apiserver v1.37,
// and any "group/version/resource" spelling (a custom resource, taken as namespaced).
func Offline() (Resolver, error) {
	c, err := memcluster.New(memcluster.Options{})
	if err != nil {
		return nil, fmt.Errorf("start offline discovery: %w", err)
	}
	return offline{dynamicinformer.NewResolver(c.Discovery(), nil)}, nil
}

type offline struct{ builtin *dynamicinformer.Resolver }

func (o offline) Resolve(name string) (dynamicinformer.Resource, error) {
	res, err := o.builtin.Resolve(name)
	if err == nil || !errors.Is(err, dynamicinformer.ErrUnknownResource) {
		return res, err
	}
	name = strings.ToLower(strings.TrimSpace(name))
	parts := strings.Split(name, "/")
	if len(parts) == 3 && parts[0] != "" && parts[1] != "" && parts[2] != "" {
		res.GVR.Group, res.GVR.Version, res.GVR.Resource = parts[0], parts[1], parts[2]
		res.Namespaced = true
		return res, nil
	}
	if resource, group, ok := strings.Cut(name, "."); ok && len(parts) == 1 && strings.Contains(group, ".") {
		res.GVR.Group, res.GVR.Resource = group, resource // resource.group, as kubectl spells it
		res.Namespaced = true
		return res, nil
	}
	return res, fmt.Errorf("%w (offline, only built-in resources resolve by short name: spell a custom resource group/version/resource or resource.group)", err)
}
