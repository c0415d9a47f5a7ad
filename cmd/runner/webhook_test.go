package main

import (
	"crypto/tls"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/jsinformer/jsinformer/admission"
	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/scripting"
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
		{"negative connections", webhookFlags{certDir: "/c", maxConns: -1}, "--webhook-max-connections -1"},
		{"negative delay", webhookFlags{certDir: "/c", shutdownDelay: -time.Second}, "--webhook-shutdown-delay -1s"},
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

// TestWebhookStatusNamesTheSharedEntry: runner status lists a row per script and kind, naming
// the entry that calls it and the scripts sharing it.
func TestWebhookStatusNamesTheSharedEntry(t *testing.T) {
	t.Parallel()
	cm := dynamicinformer.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespaced: true}
	spec := scripting.AdmissionSpec{Operations: []string{"CREATE"}, FailurePolicy: "Fail", TimeoutSeconds: 5, Mode: "enforce"}
	other := spec
	other.FailurePolicy = "Ignore"
	watch := []engine.AdmissionWatch{{Resource: cm}}
	got := webhookStatus([]engine.AdmissionEntry{
		{Script: "a.js", Validate: true, Mutate: true, Spec: spec, Watches: watch},
		{Script: "b.js", Validate: true, Spec: other, Watches: watch},
		{Script: "c.js", Validate: true, Spec: spec, Watches: watch},
	}, "jsinformer-x")
	type row struct{ script, webhook, path, shared string }
	var rows []row
	for _, w := range got {
		rows = append(rows, row{w.Script, w.Webhook, w.Path, strings.Join(w.SharedWith, ",")})
	}
	shared := admission.GroupPath("validate", "Fail", []string{"a.js", "c.js"})
	want := []row{{"a.js", "validate", shared, "c.js"}, {"a.js", "mutate", "/mutate/a.js", ""},
		{"b.js", "validate", "/validate/b.js", ""}, {"c.js", "validate", shared, "a.js"}}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows = %+v\nwant   %+v", rows, want)
	}
	if got[0].Name != got[3].Name || got[0].Name == got[2].Name || got[3].Configuration != "ValidatingWebhookConfiguration/jsinformer-x" {
		t.Errorf("entries %+v: want a.js and c.js under one name, b.js under its own", got)
	}
}

// --webhook-client-ca makes the TLS config require and verify client certificates against
// the file's CAs; a file without a certificate, or none, fails the start.
func TestWebhookClientCAConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	certs := &admission.FileCerts{}
	if cfg, err := (&webhookFlags{}).tlsConfig(certs); err != nil || cfg.ClientAuth != tls.NoClientCert {
		t.Errorf("without the flag: %v, client auth %v", err, cfg.ClientAuth)
	}
	ca := writeBytes(t, filepath.Join(dir, "ca.crt"), newClientPKI(t).caPEM)
	cfg, err := (&webhookFlags{clientCA: ca}).tlsConfig(certs)
	if err != nil || cfg.ClientAuth != tls.RequireAndVerifyClientCert || cfg.ClientCAs == nil {
		t.Errorf("with the flag: %v, %+v", err, cfg)
	}
	notPEM := writeBytes(t, filepath.Join(dir, "not.pem"), []byte("hello"))
	for file, want := range map[string]string{notPEM: "no PEM certificate", filepath.Join(dir, "absent"): "read --webhook-client-ca"} {
		if _, err := (&webhookFlags{clientCA: file}).tlsConfig(certs); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--webhook-client-ca %s: %v, want %q", file, err, want)
		}
	}
}
