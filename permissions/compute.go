package permissions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	// Timeout bounds each script's top-level evaluation; zero is scripting's default.
	Timeout time.Duration
}

// Report is what a scripts folder needs.
type Report struct {
	Scripts []string // the plugins, sorted
	Needs   []Need   // sorted (see Sort)
	Dynamic []Dynamic
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
		needs, dyn, err := loadScript(opts, src)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rep.Scripts = append(rep.Scripts, src.Name)
		rep.Needs = append(rep.Needs, needs...)
		rep.Dynamic = append(rep.Dynamic, dyn...)
	}
	Sort(rep.Needs)
	return rep, errors.Join(errs...)
}

// loadScript compiles and instantiates one plugin, without a client, to read its definition.
func loadScript(opts Options, src plugins.Source) ([]Need, []Dynamic, error) {
	prg, err := scripting.CompileIn(opts.Dir, src.Name, src.Content)
	if err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", src.Name, err)
	}
	s, err := prg.Instantiate(scripting.Options{Timeout: opts.Timeout})
	if err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", src.Name, err)
	}
	def := s.Definition()
	s.Close()
	return Script(prg, def, opts.Defaults, opts.Namespace, opts.Resolver)
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
