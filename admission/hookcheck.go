package admission

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	kvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Checking an entry before it is written: the API server refuses a whole configuration for
// one invalid entry, which would keep every other entry as it was (a stale Fail entry keeps
// denying). Each entry is checked as kube-apiserver validates a webhook
// (k8s.io/kubernetes/pkg/apis/admissionregistration/validation, not importable), and one
// that fails is left out alone and reported (Registrar.Reconcile).

var webhookOperations = []admissionregv1.OperationType{admissionregv1.Create, admissionregv1.Update,
	admissionregv1.Delete, admissionregv1.Connect, admissionregv1.OperationAll}

// check returns why the API server would refuse c as a webhook entry, nil when it accepts it.
func (c common) check() error {
	errs := kvalidation.IsFullyQualifiedName(field.NewPath("name"), c.name)
	errs = append(errs, checkClient(c.client)...)
	rules := field.NewPath("rules")
	for i, rule := range c.rules {
		errs = append(errs, checkRule(rule, rules.Index(i))...)
	}
	if c.timeout < 1 || c.timeout > 30 {
		errs = append(errs, field.Invalid(field.NewPath("timeoutSeconds"), c.timeout, "must be between 1 and 30"))
	}
	if c.failurePolicy != admissionregv1.Fail && c.failurePolicy != admissionregv1.Ignore {
		errs = append(errs, field.NotSupported(field.NewPath("failurePolicy"), c.failurePolicy, []string{"Fail", "Ignore"}))
	}
	opts := metav1validation.LabelSelectorValidationOptions{}
	errs = append(errs, metav1validation.ValidateLabelSelector(c.nsSelector, opts, field.NewPath("namespaceSelector"))...)
	errs = append(errs, metav1validation.ValidateLabelSelector(c.objSelector, opts, field.NewPath("objectSelector"))...)
	return errs.ToAggregate()
}

// checkClient checks a client config as the API server does (ValidateWebhookURL and
// ValidateWebhookService of k8s.io/apiserver).
func checkClient(cc admissionregv1.WebhookClientConfig) field.ErrorList {
	at := field.NewPath("clientConfig")
	switch {
	case (cc.URL == nil) == (cc.Service == nil):
		return field.ErrorList{field.Required(at, "exactly one of url or service is required")}
	case cc.URL != nil:
		return checkURL(*cc.URL, at.Child("url"))
	}
	svc, at := cc.Service, at.Child("service")
	var errs field.ErrorList
	if svc.Name == "" || svc.Namespace == "" {
		errs = append(errs, field.Required(at, "name and namespace are required"))
	}
	if svc.Port != nil && (*svc.Port < 1 || *svc.Port > 65535) {
		errs = append(errs, field.Invalid(at.Child("port"), *svc.Port, "must be between 1 and 65535"))
	}
	if svc.Path != nil {
		errs = append(errs, checkServicePath(*svc.Path, at.Child("path"))...)
	}
	return errs
}

func checkURL(raw string, at *field.Path) field.ErrorList {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(at, raw, err.Error())}
	case u.Scheme != "https" || u.Host == "":
		return field.ErrorList{field.Invalid(at, raw, "must be https:// with a host")}
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return field.ErrorList{field.Invalid(at, raw, "must have no user, query or fragment")}
	}
	return nil
}

// checkServicePath: a path starting with "/", each segment a DNS-1123 subdomain.
func checkServicePath(path string, at *field.Path) field.ErrorList {
	if path == "/" || path == "" {
		return nil
	}
	if !strings.HasPrefix(path, "/") {
		return field.ErrorList{field.Invalid(at, path, "must start with a '/'")}
	}
	var errs field.ErrorList
	for i, step := range strings.Split(strings.TrimSuffix(path[1:], "/"), "/") {
		if msgs := kvalidation.IsDNS1123Subdomain(step); len(msgs) > 0 {
			errs = append(errs, field.Invalid(at, path, fmt.Sprintf("segment[%d]: %s", i, strings.Join(msgs, "; "))))
		}
	}
	return errs
}

func checkRule(r admissionregv1.RuleWithOperations, at *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.Operations) == 0 {
		errs = append(errs, field.Required(at.Child("operations"), ""))
	}
	for _, op := range r.Operations {
		if !slices.Contains(webhookOperations, op) {
			errs = append(errs, field.NotSupported(at.Child("operations"), op, webhookOperations))
		}
	}
	if len(r.APIGroups) == 0 || len(r.APIVersions) == 0 || slices.Contains(r.APIVersions, "") || len(r.Resources) == 0 {
		errs = append(errs, field.Required(at, "apiGroups, apiVersions and resources are required"))
	}
	for _, res := range r.Resources {
		main, sub, hasSub := strings.Cut(res, "/")
		if main == "" || (hasSub && (sub == "" || strings.Contains(sub, "/"))) {
			errs = append(errs, field.Invalid(at.Child("resources"), res, "must be a resource or resource/subresource"))
		}
	}
	return errs
}

// errDuplicateName: two entries of one configuration share a name, which the API server refuses.
var errDuplicateName = errors.New("another entry of the configuration has this name")
