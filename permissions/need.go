package permissions

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/scripting"
)

// Need is one permission: a verb on a resource, in a namespace or everywhere, and who needs it
// and why.
type Need struct {
	// Script is the plugin that needs it, relative to the scripts folder; for the runner's own
	// needs a description in parentheses, e.g. "(--leader-elect)".
	Script   string
	Group    string
	Resource string // plural, with "/status" for the status subresource
	Verb     string
	// Namespace is where; "" means every namespace, or a cluster-scoped resource.
	Namespace string
	// Own means the runner's own namespace (its ServiceAccount's), whatever Namespace says.
	Own bool
	// ResourceName limits the need to one object: the leader election Lease, the webhook
	// configurations and certificate Secret, an object a k8s call names by a constant.
	ResourceName string
	// Why says what needs it: "watch", "k8s.patch at 05-replicate-secret.js:52",
	// "permissions[0]", ...
	Why string
}

// String reads as a sentence fragment: "patch apps/deployments in all namespaces".
func (n Need) String() string {
	return fmt.Sprintf("%s %s%s", n.Verb, n.GroupResource(), n.where())
}

// GroupResource is "deployments.apps", "configmaps" for the core group.
func (n Need) GroupResource() string {
	if n.Group == "" {
		return n.Resource
	}
	return n.Resource + "." + n.Group
}

func (n Need) where() string {
	name := ""
	if n.ResourceName != "" {
		name = fmt.Sprintf(" named %q", n.ResourceName)
	}
	switch {
	case n.Own:
		return name + " in the runner's namespace"
	case n.Namespace == "":
		return name + " in all namespaces"
	}
	return fmt.Sprintf("%s in namespace %q", name, n.Namespace)
}

// Rule is the `kubectl create clusterrole` (or role) command that grants the need.
func (n Need) Rule() string {
	kind, ns := "clusterrole", ""
	if n.Own || n.Namespace != "" {
		kind = "role"
		if !n.Own {
			ns = " -n " + n.Namespace
		}
	}
	name := ""
	if n.ResourceName != "" {
		name = " --resource-name=" + n.ResourceName
	}
	return fmt.Sprintf("kubectl create %s NAME%s --verb=%s --resource=%s%s", kind, ns, n.Verb, n.GroupResource(), name)
}

// Dynamic is a k8s call whose resource is known at run time only, in a script that declares
// no `permissions`: what it needs cannot be told before it runs.
type Dynamic struct {
	Script string
	Method string // "" for a use of the k8s global other than a method call
	File   string
	Line   int
}

func (d Dynamic) String() string {
	call := "k8s." + d.Method
	if d.Method == "" {
		call = "a use of k8s"
	}
	return fmt.Sprintf("%s:%d: %s whose resource is known at run time only; declare what it needs in 'permissions'", d.File, d.Line, call)
}

// Resolver maps a resource name as scripts write it to the API's resource.
type Resolver interface {
	Resolve(name string) (dynamicinformer.Resource, error)
}

// Script computes the needs of one loaded plugin: its watches (defaults used when the
// definition has none, limited to namespace when namespace is not ""), unless it needs no
// informer (scripting.NeedsInformers), its k8s calls found in the source, its declared
// `permissions`, and what serving its validate and mutate takes as adm says.
func Script(prg *scripting.Program, def scripting.Definition, defaults []scripting.WatchSpec, namespace string, r Resolver, adm Admission) ([]Need, []Dynamic, error) {
	b := builder{script: prg.Name(), r: r}
	watches := def.Watch
	if watches == nil {
		watches = defaults
	}
	if !scripting.NeedsInformers(prg, def) {
		watches = nil
	}
	for _, w := range watches {
		ns := w.Namespace
		if ns == "" {
			ns = namespace
		}
		b.add(w.Resource, "", []string{ns}, nil, "watch", "list", "watch")
	}
	for _, c := range prg.Calls() {
		b.call(c, len(def.Permissions) > 0)
	}
	for i, p := range def.Permissions {
		sub := ""
		res := p.Resource
		if parts := strings.Split(res, "/"); len(parts) > 1 && subresources[parts[len(parts)-1]] {
			res, sub = strings.Join(parts[:len(parts)-1], "/"), parts[len(parts)-1]
		}
		nss := p.Namespaces
		if len(nss) == 0 {
			nss = []string{""}
		}
		b.add(res, sub, nss, nil, fmt.Sprintf("permissions[%d]", i), p.Verbs...)
	}
	if def.Outbox != nil { // a message given up is an Event on the object it names (docs/once.md)
		b.add("v1/events", "", []string{""}, nil, "outbox (the Event of a failed message)", callVerbs["event"]...)
	}
	b.needs = append(b.needs, adm.Needs(prg.Name(), def.Validate, def.Mutate)...)
	b.needs = append(b.needs, AuditNeeds(prg.Name(), def.Validate, def.Admission)...)
	return b.needs, b.dynamic, b.err
}

// subresources are the subresources a `permissions` resource may end in.
var subresources = map[string]bool{"status": true, "scale": true}

// callVerbs are the verbs each k8s method needs; the status methods act on "/status".
var callVerbs = map[string][]string{
	"get": {"get"}, "list": {"list"}, "create": {"create"}, "update": {"update"}, "patch": {"patch"},
	"delete": {"delete"}, "updateStatus": {"update"}, "patchStatus": {"patch"},
	"event":        {"create", "patch"}, // a repeated Event is counted with a patch (k8sclient)
	"addFinalizer": {"get", "patch"}, "removeFinalizer": {"get", "patch"},
}

type builder struct {
	script  string
	r       Resolver
	needs   []Need
	dynamic []Dynamic
	err     error
}

func (b *builder) call(c scripting.StaticCall, declared bool) {
	if c.Method == "" || c.Resources == nil {
		if !declared {
			b.dynamic = append(b.dynamic, Dynamic{Script: b.script, Method: c.Method, File: c.File, Line: c.Line})
		}
		return
	}
	verbs := callVerbs[c.Method]
	if c.Apply {
		verbs = []string{"patch", "create"} // an apply creates the object when it is missing
	}
	sub := ""
	if c.Method == "updateStatus" || c.Method == "patchStatus" {
		sub = "status"
	}
	nss := c.Namespaces
	if nss == nil || c.Method == "event" {
		nss = []string{""}
	}
	why := fmt.Sprintf("k8s.%s at %s:%d", c.Method, c.File, c.Line)
	for _, res := range c.Resources {
		b.add(res, sub, nss, c.Names, why, verbs...)
	}
}

// add records verbs on a resource name in each namespace, on the objects names (nil: any).
// A create is never limited by name: the authorizer is not told the name of an object that
// does not exist yet, so a rule with resourceNames never grants it.
func (b *builder) add(name, sub string, namespaces, names []string, why string, verbs ...string) {
	res, err := b.r.Resolve(name)
	if err != nil {
		if b.err == nil {
			b.err = fmt.Errorf("%s: %s: %w", b.script, why, err)
		}
		return
	}
	resource := res.GVR.Resource
	if sub != "" {
		resource += "/" + sub
	}
	for _, ns := range slices.Compact(slices.Sorted(slices.Values(namespaces))) {
		if !res.Namespaced {
			ns = ""
		}
		for _, v := range verbs {
			for _, obj := range namesOf(v, names) {
				b.needs = append(b.needs, Need{Script: b.script, Group: res.GVR.Group, Resource: resource, Verb: v,
					Namespace: ns, ResourceName: obj, Why: why})
			}
		}
	}
}

// namesOf are the object names a need of verb is limited to: "" (any) for a create or when
// names are not known.
func namesOf(verb string, names []string) []string {
	if verb == "create" || len(names) == 0 {
		return []string{""}
	}
	return names
}
