package scripting

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dop251/goja"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The admission part of a definition: validate(obj, ctx), mutate(obj, ctx) and the
// `admission` options that configure the webhooks they are served through (admit.go calls
// them).

// Admission modes: what a denial of validate does.
const (
	// ModeEnforce denies: the API server refuses the request with the script's message.
	ModeEnforce = "enforce"
	// ModeWarn allows, turning the denial into a warning the client prints.
	ModeWarn = "warn"
	// ModeAudit allows silently; the decision is only recorded (metric, log, explain).
	ModeAudit = "audit"
)

// Failure policies: what a validate or mutate that throws, times out or is stopped answers.
const (
	// FailurePolicyFail denies with the script's error and its file:line.
	FailurePolicyFail = "Fail"
	// FailurePolicyIgnore allows with a warning.
	FailurePolicyIgnore = "Ignore"
)

// Admission defaults, documented in docs/admission.md.
const (
	DefaultAdmissionTimeoutSeconds = 10
	maxAdmissionTimeoutSeconds     = 30 // the API server's own limit
)

// DefaultOperations are the operations a script's webhooks match when `admission.operations`
// is not given.
var DefaultOperations = []string{"CREATE", "UPDATE"}

var (
	admissionKeys = []string{"operations", "failurePolicy", "timeoutSeconds", "mode", "subresources", "allowClusterLockout", "audit",
		"namespaceSelector", "excludeNamespaces"}
	admissionOps     = []string{"CREATE", "UPDATE", "DELETE", "CONNECT", "*"}
	admissionModes   = []string{ModeEnforce, ModeWarn, ModeAudit}
	admissionPolicys = []string{FailurePolicyFail, FailurePolicyIgnore}
)

// AdmissionSpec is a definition's `admission` options with their defaults filled in. It is
// the zero value when the script has neither validate nor mutate.
type AdmissionSpec struct {
	Operations     []string // CREATE, UPDATE, DELETE, CONNECT or "*"; DefaultOperations when not given
	FailurePolicy  string   // FailurePolicyFail (default) or FailurePolicyIgnore
	TimeoutSeconds int      // the webhook's timeoutSeconds, 1 to 30; DefaultAdmissionTimeoutSeconds
	Mode           string   // ModeEnforce (default), ModeWarn or ModeAudit
	// Subresources are the subresources of the watched resources the webhooks cover too
	// ("scale": deployments/scale), or "*" alone; nil, the default, covers the main resources
	// only (admissionscope.go).
	Subresources []string
	// AllowClusterLockout accepts failurePolicy Fail on a resource where it could lock the
	// cluster out (LockoutRisk); true only with FailurePolicyFail.
	AllowClusterLockout bool
	// Audit: validate also audits the cached objects (audit.go); default false.
	Audit bool
	// NamespaceSelector selects, by their labels, the namespaces whose objects the script
	// admits and audits, as a webhook's namespaceSelector (namespaceselect.go); nil selects
	// every namespace of the watch.
	NamespaceSelector *metav1.LabelSelector
	// ExcludeNamespaces are namespaces, by name, whose objects the script never admits nor
	// audits; sorted.
	ExcludeNamespaces []string
}

// CallLimits are the Timeout and Grace of the runtimes that serve admission calls: within
// 60% and 20% of TimeoutSeconds, and never longer than handlerTimeout and DefaultGrace, so
// that a call returns (at most Timeout + Grace after it started, doc.go) well before the API
// server gives up on the webhook, leaving it time to answer by the failure policy.
func (a AdmissionSpec) CallLimits(handlerTimeout time.Duration) (timeout, grace time.Duration) {
	budget := time.Duration(max(a.TimeoutSeconds, 1)) * time.Second
	timeout, grace = budget*6/10, budget*2/10
	if handlerTimeout > 0 {
		timeout = min(timeout, handlerTimeout)
	}
	return timeout, min(grace, DefaultGrace)
}

// readAdmission reads validate, mutate and admission; admission without either is an error.
func (s *instance) readAdmission(def *goja.Object, l locator) error {
	var err error
	if s.validateFn, err = optionalFunc(def.Get("validate"), "validate", l); err != nil {
		return err
	}
	if s.mutateFn, err = optionalFunc(def.Get("mutate"), "mutate", l); err != nil {
		return err
	}
	s.def.Validate, s.def.Mutate = s.validateFn != nil, s.mutateFn != nil
	if s.def.Validate {
		s.validateLine = l.line("validate")
	}
	if s.def.Mutate {
		s.mutateLine = l.line("mutate")
	}
	opts := def.Get("admission")
	if !s.def.Validate && !s.def.Mutate {
		if !isMissing(opts) {
			return invalidf(l.file, l.line("admission"), "'admission' configures validate and mutate, but the definition has neither")
		}
		return nil
	}
	if s.def.Admission, err = readAdmissionSpec(opts, l); err == nil && !isMissing(opts) {
		err = readAudit(opts.(*goja.Object), &s.def.Admission, s.def.Validate, l)
	}
	return err
}

func readAdmissionSpec(v goja.Value, l locator) (AdmissionSpec, error) {
	spec := AdmissionSpec{Operations: slices.Clone(DefaultOperations), FailurePolicy: FailurePolicyFail,
		TimeoutSeconds: DefaultAdmissionTimeoutSeconds, Mode: ModeEnforce}
	if isMissing(v) {
		return spec, nil
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() == "Array" || isFunction(obj) {
		return spec, invalidf(l.file, l.line("admission"), "'admission' must be an object such as "+
			`{ operations: ["CREATE", "UPDATE"], failurePolicy: "Fail" }, got `+typeName(v))
	}
	if err := l.checkKeys(obj, "admission", admissionKeys); err != nil {
		return spec, err
	}
	var err error
	if spec.Operations, err = readOperations(obj.Get("operations"), l); err != nil {
		return spec, err
	}
	if spec.FailurePolicy, err = readChoice(obj.Get("failurePolicy"), "admission.failurePolicy", admissionPolicys, spec.FailurePolicy, l); err != nil {
		return spec, err
	}
	if spec.Mode, err = readChoice(obj.Get("mode"), "admission.mode", admissionModes, spec.Mode, l); err != nil {
		return spec, err
	}
	if spec.Subresources, err = readSubresources(obj.Get("subresources"), l); err != nil {
		return spec, err
	}
	if spec.AllowClusterLockout, err = readAllowLockout(obj.Get("allowClusterLockout"), spec.FailurePolicy, l); err != nil {
		return spec, err
	}
	if spec.NamespaceSelector, err = readNamespaceSelector(obj.Get("namespaceSelector"), l); err != nil {
		return spec, err
	}
	if spec.ExcludeNamespaces, err = readExcludeNamespaces(obj.Get("excludeNamespaces"), l); err != nil {
		return spec, err
	}
	spec.TimeoutSeconds, err = readInt(obj.Get("timeoutSeconds"), "timeoutSeconds", 1, DefaultAdmissionTimeoutSeconds, l)
	if err == nil && spec.TimeoutSeconds > maxAdmissionTimeoutSeconds {
		err = invalidf(l.file, l.line("timeoutSeconds"), fmt.Sprintf(
			"'admission.timeoutSeconds' must be between 1 and %d, got %d", maxAdmissionTimeoutSeconds, spec.TimeoutSeconds))
	}
	return spec, err
}

func readOperations(v goja.Value, l locator) ([]string, error) {
	if isMissing(v) {
		return slices.Clone(DefaultOperations), nil
	}
	bad := func(msg string) error {
		return invalidf(l.file, l.line("operations"), "'admission.operations' "+msg)
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() != "Array" {
		return nil, bad("must be a list such as [\"CREATE\", \"UPDATE\"], got " + typeName(v))
	}
	n := obj.Get("length").ToInteger()
	if n == 0 || n > int64(len(admissionOps)) {
		return nil, bad(fmt.Sprintf("must list 1 to %d operations, got %d", len(admissionOps)-1, n))
	}
	var ops []string
	for i := range n {
		el := obj.Get(fmt.Sprint(i))
		op := el.String()
		if !isString(el) || !slices.Contains(admissionOps, op) {
			msg := fmt.Sprintf("has %s; valid operations are %s", typeName(el), strings.Join(admissionOps, ", "))
			if upper := strings.ToUpper(op); isString(el) && slices.Contains(admissionOps, upper) {
				msg += fmt.Sprintf(" (in capitals, as the API server names them): did you mean %q?", upper)
			}
			return nil, bad(msg)
		}
		if slices.Contains(ops, op) {
			return nil, bad(fmt.Sprintf("lists %q twice", op))
		}
		ops = append(ops, op)
	}
	if len(ops) > 1 && slices.Contains(ops, "*") {
		return nil, bad(`lists "*" with other operations; "*" alone means all`)
	}
	return ops, nil
}

// readChoice reads an optional string that must be one of valid.
func readChoice(v goja.Value, key string, valid []string, def string, l locator) (string, error) {
	if isMissing(v) {
		return def, nil
	}
	if isString(v) && slices.Contains(valid, v.String()) {
		return v.String(), nil
	}
	msg := fmt.Sprintf("'%s' must be one of %s, got %s", key, strings.Join(quoted(valid), ", "), typeName(v))
	if s := closest(v.String(), valid); isString(v) && s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return "", invalidf(l.file, l.line(lastKey(key)), msg)
}

func quoted(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
