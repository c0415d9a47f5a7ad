package main

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/jsinformer/jsinformer/admission"
	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine"
)

func TestWebhookFlagsValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		w    webhookFlags
		want string
	}{
		{"off", webhookFlags{}, ""},
		{"server only", webhookFlags{certDir: "/certs"}, ""},
		{"url", webhookFlags{url: "https://127.0.0.1:9443", certDir: "/certs"}, ""},
		{"service", webhookFlags{service: "ns/runner", certDir: "/certs"}, ""},
		{"both", webhookFlags{url: "https://x.invalid", service: "ns/runner", certDir: "/c"}, "cannot be used together"},
		{"http", webhookFlags{url: "http://127.0.0.1:9443", certDir: "/c"}, "over HTTPS only"},
		{"bad service", webhookFlags{service: "runner", certDir: "/c"}, "want NAMESPACE/NAME"},
		{"certificate made", webhookFlags{url: "https://127.0.0.1:9443"}, ""},
	} {
		err := tc.w.validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestAdmissionEntriesFromTheEngine(t *testing.T) {
	t.Parallel()
	cm := dynamicinformer.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespaced: true}
	ns := dynamicinformer.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}}
	got := admissionEntries([]engine.AdmissionEntry{
		{Script: "a.js", Validate: true, Watches: []engine.AdmissionWatch{{Resource: cm, Namespace: "x", LabelSelector: "app=web"}, {Resource: cm, Namespace: "y", LabelSelector: "app=web"}}},
		{Script: "b.js", Mutate: true, Watches: []engine.AdmissionWatch{{Resource: cm, Namespace: "x", LabelSelector: "a=1"}, {Resource: ns, LabelSelector: "b=2"}}},
	})
	cmRule := admission.Rule{Version: "v1", Resource: "configmaps", Namespaced: true}
	want := []admission.Entry{
		{Script: "a.js", Validate: true, Rules: []admission.Rule{cmRule, cmRule}, Namespaces: []string{"x", "y"}, LabelSelector: "app=web"},
		{Script: "b.js", Mutate: true, Rules: []admission.Rule{cmRule, {Version: "v1", Resource: "namespaces"}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("entries = %+v\nwant      %+v", got, want)
	}
}

func TestWebhookCertificateHosts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		w    webhookFlags
		want []string
	}{
		{webhookFlags{url: "https://127.0.0.1:9443"}, []string{"127.0.0.1"}},
		{webhookFlags{service: "tools/runner"}, []string{"runner.tools.svc", "runner.tools.svc.cluster.local", "runner.tools"}},
	} {
		if got := tc.w.hosts(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("hosts of %+v = %v, want %v", tc.w, got, tc.want)
		}
	}
}
