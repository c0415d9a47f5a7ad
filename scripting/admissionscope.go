package scripting

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"

	"github.com/dop251/goja"
)

// What a script's webhooks cover beyond its watched resources' main resource (the
// `admission.subresources` option), and the resources on which a webhook under
// failurePolicy Fail could lock the cluster out (LockoutRisk, checked once the watches are
// resolved: CheckLockout).

// maxSubresources bounds admission.subresources: a resource has a handful.
const maxSubresources = 16

var subresourceName = regexp.MustCompile(`^[a-z][a-z0-9]*$`)

// readSubresources reads admission.subresources: subresource names ("scale", "status"), or
// "*" alone for all of them. Nil when not given: the main resource only.
func readSubresources(v goja.Value, l locator) ([]string, error) {
	if isMissing(v) {
		return nil, nil
	}
	bad := func(msg string) error {
		return invalidf(l.file, l.line("subresources"), "'admission.subresources' "+msg)
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() != "Array" {
		return nil, bad(`must be a list such as ["scale"], got ` + typeName(v))
	}
	n := obj.Get("length").ToInteger()
	if n > maxSubresources {
		return nil, bad(fmt.Sprintf("lists %d subresources; at most %d", n, maxSubresources))
	}
	out := make([]string, 0, n)
	for i := range n {
		el := obj.Get(fmt.Sprint(i))
		name := el.String()
		switch {
		case !isString(el) || (name != "*" && !subresourceName.MatchString(name)):
			return nil, bad(fmt.Sprintf(`has %s; a subresource is a lowercase name such as "scale" or "status", or "*" for all`, typeName(el)))
		case slices.Contains(out, name):
			return nil, bad(fmt.Sprintf("lists %q twice", name))
		}
		out = append(out, name)
	}
	if len(out) > 1 && slices.Contains(out, "*") {
		return nil, bad(`lists "*" with other subresources; "*" alone means all`)
	}
	return out, nil
}

// readAllowLockout reads admission.allowClusterLockout: meaningful with failurePolicy Fail
// only, so that with Ignore it is refused as the mistake it must be.
func readAllowLockout(v goja.Value, policy string, l locator) (bool, error) {
	if isMissing(v) {
		return false, nil
	}
	if v.ExportType() != reflect.TypeFor[bool]() {
		return false, invalidf(l.file, l.line("allowClusterLockout"), "'admission.allowClusterLockout' must be true or false, got "+typeName(v))
	}
	allow := v.ToBoolean()
	if allow && policy != FailurePolicyFail {
		return false, invalidf(l.file, l.line("allowClusterLockout"), `'admission.allowClusterLockout' applies to failurePolicy "Fail" only: `+
			`under "Ignore" the webhooks let every write through while no runner answers; remove it`)
	}
	return allow, nil
}

// LockoutRisk is why a webhook under failurePolicy Fail on a resource (its API group, plural
// name and scope, as resolved) could lock the cluster out while no runner answers (a crash, a
// rollout, a network split): "" when it cannot. A namespaced resource's webhooks never match
// kube-system, kube-node-lease and the runner's own namespace; a cluster-scoped resource's
// (nodes, namespaces, CRDs, webhook configurations, cluster roles) cannot exclude anything,
// and Leases elsewhere are the leader election of controllers.
func LockoutRisk(group, resource string, namespaced bool) string {
	switch {
	case !namespaced:
		return "it is cluster-scoped, so no namespace can be left out of its webhooks: every node, namespace or " +
			"cluster-wide object of that kind, the control plane's included, is written through them"
	case group == "coordination.k8s.io" && resource == "leases":
		return "Leases are the leader election of controllers and the heartbeats of nodes: a controller that cannot renew its Lease stops"
	}
	return ""
}

// CheckLockout returns the load error of file's definition when its webhooks would cover
// resource (named as the script wrote it; group, plural and scope as resolved) under
// failurePolicy Fail, a LockoutRisk, without admission.allowClusterLockout; nil otherwise.
func (a AdmissionSpec) CheckLockout(file, name, group, resource string, namespaced bool) error {
	why := LockoutRisk(group, resource, namespaced)
	if why == "" || a.FailurePolicy != FailurePolicyFail || a.AllowClusterLockout {
		return nil
	}
	return invalidf(file, 0, fmt.Sprintf(`admission on %q under failurePolicy "Fail" (the default when not given) would deny `+
		`every write to it while no runner answers, and can lock the cluster out: %s. Write admission: { failurePolicy: "Ignore" } `+
		`to let writes through then, or admission: { failurePolicy: "Fail", allowClusterLockout: true } to accept the risk`, name, why))
}
