package offline

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/jsinformer/jsinformer/admission"
	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/memcluster"
)

// Which webhooks a request reaches, and the in-memory cluster's admission hook.

// webhook is one webhook entry the API server would call: the scripts sharing it
// (admission.Groups, as the runner registers them).
type webhook struct{ group admission.Group }

// matching are the webhook entries of kind the API server would call for req, in the order
// it calls them: the order of the configuration's webhooks, each entry shared by the scripts
// whose entries would be alike (admission.Groups), in order of their first script. They
// match as the registered webhooks do (admission.Registrar): the script's operations, a rule
// per watched resource (the main resource, and the subresources of admission.subresources),
// the namespaceSelector (never admission.AlwaysExcluded; the watched namespaces when the
// script watches some only; the script's admission.excludeNamespaces and namespaceSelector,
// matched by the labels of the cluster's Namespace) and the objectSelector (the watches'
// shared label selector, matched by the object or the old one).
func (a *admitter) matching(req AdmissionRequest, kind string) []webhook {
	byScript := map[string]engine.AdmissionEntry{}
	var entries []admission.Entry
	for _, e := range a.e.AdmissionEntries() {
		if req.Script == "" || e.Script == req.Script {
			byScript[e.Script] = e
			entries = append(entries, webhookEntry(e))
		}
	}
	var out []webhook
	for _, g := range admission.Groups(entries, kind) {
		if a.matches(byScript[g.Scripts[0]], req) { // the scripts sharing an entry match alike
			out = append(out, webhook{group: g})
		}
	}
	return out
}

// webhookEntry is what the registrar derives e's webhook entries from (the runner's
// admissionEntries).
func webhookEntry(e engine.AdmissionEntry) admission.Entry {
	out := admission.Entry{Script: e.Script, Validate: e.Validate, Mutate: e.Mutate, Spec: e.Spec}
	for _, w := range e.Watches {
		gvr := w.Resource.GVR
		out.Rules = append(out.Rules, admission.Rule{Group: gvr.Group, Version: gvr.Version, Resource: gvr.Resource, Namespaced: w.Resource.Namespaced})
	}
	out.Namespaces, out.LabelSelector = e.Selectors()
	return out
}

func (a *admitter) matches(e engine.AdmissionEntry, req AdmissionRequest) bool {
	ops, subs := e.Spec.Operations, e.Spec.Subresources
	if !slices.Contains(ops, req.Operation) && !slices.Contains(ops, "*") {
		return false
	}
	if req.SubResource != "" && !slices.Contains(subs, req.SubResource) && !slices.Contains(subs, "*") {
		return false
	}
	i := slices.IndexFunc(e.Watches, func(w engine.AdmissionWatch) bool { return w.Resource.GVR == req.Resource })
	if i < 0 {
		return false
	}
	namespaces, selector := e.Selectors()
	// The namespaceSelector applies to namespaced objects, and to a Namespace itself.
	ns := req.Namespace
	if !e.Watches[i].Resource.Namespaced {
		ns = ""
		if req.Resource == memcluster.NamespacesGVR {
			ns = req.Name
		}
	}
	if ns != "" && (slices.Contains(admission.AlwaysExcluded, ns) || (len(namespaces) > 0 && !slices.Contains(namespaces, ns))) {
		return false
	}
	if ns != "" && !e.Spec.Namespaces().Selects(ns, a.namespaceLabels(req, ns)) {
		return false
	}
	return selectorMatches(selector, req.Object) || selectorMatches(selector, req.OldObject)
}

// namespaceLabels are the labels the API server matches a namespaceSelector with: a
// Namespace request's own object's (the old one's on DELETE), else the stored Namespace's
// (nil when it does not exist: the selection then sees only its name).
func (a *admitter) namespaceLabels(req AdmissionRequest, ns string) map[string]string {
	if req.Resource == memcluster.NamespacesGVR {
		obj := req.Object
		if obj == nil {
			obj = req.OldObject
		}
		if obj != nil {
			return (&unstructured.Unstructured{Object: obj}).GetLabels()
		}
	}
	if a.cluster == nil {
		return nil
	}
	stored, err := a.cluster.Get(memcluster.NamespacesGVR, "", ns)
	if err != nil {
		return nil
	}
	return stored.GetLabels()
}

// selectorMatches reports whether obj's labels match selector, as an objectSelector does: an
// empty selector matches every request, a missing object none.
func selectorMatches(selector string, obj map[string]any) bool {
	if selector == "" {
		return true
	}
	sel, err := labels.Parse(selector)
	if obj == nil || err != nil {
		return false
	}
	return sel.Matches(labels.Set((&unstructured.Unstructured{Object: obj}).GetLabels()))
}

// clusterHook is the in-memory cluster's admission: every write by the harness or the
// plugin goes through the admission scripts the engine serves, as DefaultUser, and their
// warnings go back to the writer (memcluster.WriteOptions.Warn).
type clusterHook struct{ a *admitter }

var _ memcluster.Admission = clusterHook{}

func (c clusterHook) request(r memcluster.AdmissionRequest) AdmissionRequest {
	req := AdmissionRequest{Operation: r.Operation, Resource: r.Resource, SubResource: r.Subresource, Namespace: r.Namespace,
		Name: r.Name, UserInfo: DefaultUser, DryRun: r.DryRun}
	if r.Object != nil {
		req.Object = r.Object.Object
	}
	if r.OldObject != nil {
		req.OldObject = r.OldObject.Object
	}
	return req
}

// Mutate returns the object as the mutating webhooks left it, or their denial. The calls'
// deadlines are the webhook server's own (90% of each script's timeoutSeconds).
func (c clusterHook) Mutate(r memcluster.AdmissionRequest) (*unstructured.Unstructured, error) {
	req := c.request(r)
	res := c.a.mutate(context.Background(), req)
	c.observe("mutate", req, res)
	for _, w := range res.Warnings {
		r.Warn(w)
	}
	if res.Err != nil || res.Patch == nil {
		return nil, res.Err
	}
	return &unstructured.Unstructured{Object: res.Object}, nil
}

// Validate returns the first denial of the validating webhooks.
func (c clusterHook) Validate(r memcluster.AdmissionRequest) error {
	var res AdmissionResult
	req := c.request(r)
	c.a.validate(context.Background(), req, &res)
	c.observe("validate", req, res)
	for _, w := range res.Warnings {
		r.Warn(w)
	}
	return res.Err
}

// observe hands a write's answers to Config.OnAdmission, when set.
func (c clusterHook) observe(kind string, req AdmissionRequest, res AdmissionResult) {
	if c.a.onWrite != nil {
		c.a.onWrite(kind, req, res)
	}
}
