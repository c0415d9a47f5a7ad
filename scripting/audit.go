package scripting

import (
	"github.com/dop251/goja"
)

// Audit: `admission: { audit: true }` asks the runner to evaluate validate over every object
// already in the script's cache, not only the next request, and to publish the results as
// reports (engine: audit). Off by default: an audit calls validate once per cached object on
// every load of the script, which a policy written for requests alone (one that reads
// ctx.userInfo or ctx.oldObject) may not expect, and it writes report objects the cluster
// may not have the definitions of; a script opts in when its validate judges an object by
// the object alone.

// OperationAudit is ctx.operation during an audit call: there is no request, so userInfo
// and oldObject are null and dryRun is false.
const OperationAudit = "AUDIT"

// readAudit reads admission.audit into spec; it requires validate, since an audit runs
// validate alone.
func readAudit(obj *goja.Object, spec *AdmissionSpec, hasValidate bool, l locator) error {
	v := obj.Get("audit")
	if isMissing(v) {
		return nil
	}
	if _, ok := v.Export().(bool); !ok {
		return invalidf(l.file, l.line("audit"), "'admission.audit' must be true or false, got "+typeName(v))
	}
	spec.Audit = v.ToBoolean()
	if spec.Audit && !hasValidate {
		return invalidf(l.file, l.line("audit"), "'admission.audit' audits objects with validate, but the definition has no validate")
	}
	return nil
}
