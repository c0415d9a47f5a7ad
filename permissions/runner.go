package permissions

import "github.com/jsinformer/jsinformer/scripting"

// What the runner needs for itself, besides its scripts: the Leases of --leader-elect and
// --sharded, the namespaces of --shard-cache, and the reviews of a non-loopback debug API.

// DefaultLeaseName is --leader-elect-resource-name's default.
const DefaultLeaseName = "jsinformer"

// Runner describes how the runner is started, for its own needs.
type Runner struct {
	LeaderElect bool
	Sharded     bool
	// ShardCache is --shard-cache: the lowest replica lists the namespaces to plan each ring.
	ShardCache bool
	// LeaseName is --leader-elect-resource-name ("" is DefaultLeaseName); LeaseNamespace its
	// namespace, "" for the runner's own.
	LeaseName      string
	LeaseNamespace string
	// DebugAuth is a --debug-addr off loopback: each request is checked with a TokenReview
	// and a SubjectAccessReview.
	DebugAuth bool
}

// Needs are the runner's own needs.
func (o Runner) Needs() []Need {
	var out []Need
	lease := func(verb, name, script string) {
		why := "the replicas' Leases"
		if name != "" || script == "(--leader-elect)" {
			why = "the leader election Lease"
		}
		out = append(out, Need{Script: script, Group: "coordination.k8s.io", Resource: "leases", Verb: verb,
			Namespace: o.LeaseNamespace, Own: o.LeaseNamespace == "", ResourceName: name, Why: why})
	}
	if o.LeaderElect {
		name := o.LeaseName
		if name == "" {
			name = DefaultLeaseName
		}
		// create cannot be limited by name: the authorizer does not know the name of an object
		// that does not exist yet.
		lease("create", "", "(--leader-elect)")
		lease("get", name, "(--leader-elect)")
		lease("update", name, "(--leader-elect)")
	}
	if o.Sharded {
		// One Lease per replica, named from its identity: names are not known in advance.
		for _, verb := range []string{"create", "delete", "get", "list", "update"} {
			lease(verb, "", "(--sharded)")
		}
	}
	if o.Sharded && o.ShardCache {
		out = append(out, Need{Script: "(--shard-cache)", Resource: "namespaces", Verb: "list",
			Why: "plans each ring's even share of the namespaces"})
	}
	if o.DebugAuth {
		out = append(out,
			Need{Script: "(--debug-addr)", Group: "authentication.k8s.io", Resource: "tokenreviews", Verb: "create", Why: "authenticates debug API callers"},
			Need{Script: "(--debug-addr)", Group: "authorization.k8s.io", Resource: "subjectaccessreviews", Verb: "create", Why: "authorizes debug API callers"})
	}
	return out
}

// Admission is how the runner serves its scripts' validate and mutate, for what that takes
// of the API server. The zero value serves none: a script's validate and mutate then need
// nothing.
type Admission struct {
	// ConfigName names the Validating- and MutatingWebhookConfiguration the runner registers
	// (--webhook-name); "" when it registers none (no --webhook-url or --webhook-service, or
	// --dry-run).
	ConfigName string
	// Secret names the Secret the runner keeps its serving certificate in (<webhook-name>-tls);
	// "" when the certificate comes from --webhook-cert-dir or nothing is served.
	Secret string
	// SecretNamespace is the Secret's namespace, "" for the runner's own.
	SecretNamespace string
}

// Needs is what a script with a `validate` or `mutate` handler needs: the runner reconciles
// its entry in both webhook configurations by name (admission.Registrar gets, creates,
// updates and deletes the Validating and the Mutating one, also to remove a stale entry of the
// kind the script no longer has), and keeps the serving certificate in its Secret
// (admission.SecretCerts gets, creates and updates it). Create is not limited by name: the
// authorizer is not told the name of an object that does not exist yet.
func (a Admission) Needs(script string, validate, mutate bool) []Need {
	if !validate && !mutate {
		return nil
	}
	var out []Need
	add := func(group, resource, verb, name, ns string, own bool) {
		why := "admission"
		if verb == "create" {
			name, why = "", "admission (create cannot be limited by name)"
		}
		out = append(out, Need{Script: script, Group: group, Resource: resource, Verb: verb, ResourceName: name,
			Namespace: ns, Own: own, Why: why})
	}
	if a.ConfigName != "" {
		for _, resource := range []string{"validatingwebhookconfigurations", "mutatingwebhookconfigurations"} {
			for _, verb := range []string{"create", "delete", "get", "update"} {
				add("admissionregistration.k8s.io", resource, verb, a.ConfigName, "", false)
			}
		}
	}
	if a.Secret != "" {
		for _, verb := range []string{"create", "get", "update"} {
			add("", "secrets", verb, a.Secret, a.SecretNamespace, a.SecretNamespace == "")
		}
	}
	return out
}

// AuditNeeds is what a script with validate and admission.audit needs besides admission:
// the runner publishes its results as openreports.io reports and clusterreports, applied
// server-side (patch, and create for a report that does not exist yet), read back at start
// (get, list) and deleted once empty. The CRDs themselves (deploy/crds/openreports.yaml) are
// installed by the cluster's admin, not by the runner. An audit that selects namespaces by
// their labels (admission.namespaceSelector) also lists and watches Namespaces, whose labels
// it reads from the runner's cache.
func AuditNeeds(script string, validate bool, spec scripting.AdmissionSpec) []Need {
	if !validate || !spec.Audit {
		return nil
	}
	var out []Need
	for _, resource := range []string{"reports", "clusterreports"} {
		for _, verb := range []string{"create", "delete", "get", "list", "patch"} {
			out = append(out, Need{Script: script, Group: "openreports.io", Resource: resource, Verb: verb, Why: "audit reports"})
		}
	}
	if spec.Namespaces().ByLabels() {
		for _, verb := range []string{"list", "watch"} {
			out = append(out, Need{Script: script, Resource: "namespaces", Verb: verb, Why: "audit: admission.namespaceSelector"})
		}
	}
	return out
}
