package main

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/jsinformer/jsinformer/admission"
	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/status"
)

// The webhook entries runner status lists: the engine's scripts serving admission as the
// registrar turns them into entries, one row per script and kind naming the entry that calls
// it (shared by the scripts whose entries would be alike, admission.Groups).

// webhookStatus lists the webhook entries of the engine's scripts serving admission, by
// script; config is the configurations' name, "" when this runner registers none.
func webhookStatus(in []engine.AdmissionEntry, config string) []status.WebhookStatus {
	entries := admissionEntries(in) // one entry per element of in, in order
	groups := map[string]admission.Group{}
	for _, kind := range []string{"validate", "mutate"} {
		for _, g := range admission.Groups(entries, kind) {
			for _, s := range g.Scripts {
				groups[kind+" "+s] = g
			}
		}
	}
	var out []status.WebhookStatus
	for i, e := range entries {
		for _, kind := range []struct{ name, configKind string }{{"validate", "ValidatingWebhookConfiguration"}, {"mutate", "MutatingWebhookConfiguration"}} {
			g, ok := groups[kind.name+" "+e.Script]
			if !ok {
				continue
			}
			w := status.WebhookStatus{Script: e.Script, Name: g.Name(), Webhook: kind.name, Path: g.Path(),
				SharedWith: slices.DeleteFunc(slices.Clone(g.Scripts), func(s string) bool { return s == e.Script }),
				Rules:      ruleTexts(e), FailurePolicy: e.Spec.FailurePolicy, Mode: e.Spec.Mode, TimeoutSeconds: e.Spec.TimeoutSeconds,
				Namespaces: e.Namespaces, LabelSelector: e.LabelSelector, Stopped: in[i].Stopped}
			if config != "" {
				w.Configuration = kind.configKind + "/" + config
			}
			out = append(out, w)
		}
	}
	return out
}

func ruleTexts(e admission.Entry) []string {
	out := make([]string, 0, len(e.Rules))
	for _, r := range e.Rules {
		scope := "Cluster"
		if r.Namespaced {
			scope = "Namespaced"
		}
		gvr := dynamicinformer.FormatGVR(schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Resource})
		for _, sub := range e.Spec.Subresources { // as the rule lists them: "deployments/scale"
			gvr += ", " + r.Resource + "/" + sub
		}
		out = append(out, fmt.Sprintf("%s %s (%s)", strings.Join(e.Spec.Operations, ","), gvr, scope))
	}
	return out
}

// status lists h's entries for runner status; h nil (no --webhook-* flag) lists them as not
// registered, so that a script's validate nobody serves shows.
func (h *webhooks) status(e *engine.Engine) []status.WebhookStatus {
	config := ""
	if h != nil && h.registrar != nil {
		config = h.registrar.Name
	}
	return webhookStatus(e.AdmissionEntries(), config)
}
