package main

import (
	"github.com/spf13/pflag"

	"github.com/jsinformer/jsinformer/permissions"
)

// What the admission side takes of the API server, as the --webhook-* flags say: the runner's
// start-up check asks for it (engine.Config.Admission) and `runner rbac` prints it.

// registers reports whether the runner registers webhook configurations.
func (w *webhookFlags) registers(dryRun bool) bool {
	return (w.url != "" || w.service != "") && !dryRun
}

// serves reports whether the runner serves admission at all (newWebhooks).
func (w *webhookFlags) serves() bool {
	return w.certDir != "" || w.url != "" || w.service != ""
}

// admission is the admission side's permissions for a runner in namespace (its pod's): the
// configurations when it registers them, the certificate Secret of that namespace when it
// keeps its certificate in one (no --webhook-cert-dir). secretNamespace is where the Secret
// is named to be, "" for the runner's own (kustomize fills it in).
func (w *webhookFlags) admission(dryRun bool, namespace, secretNamespace string) permissions.Admission {
	var a permissions.Admission
	name := w.name
	if name == "" {
		name = "jsinformer-" + namespace
	}
	if w.registers(dryRun) {
		a.ConfigName = name
	}
	if w.serves() && w.certDir == "" {
		a.Secret, a.SecretNamespace = name+"-tls", secretNamespace
	}
	return a
}

// addForRBAC adds the flags `runner rbac` reads of the runner's: those that decide what
// admission takes.
func (w *webhookFlags) addForRBAC(f *pflag.FlagSet, dryRun *bool) {
	f.StringVar(&w.url, "webhook-url", "", "the runner's --webhook-url: it registers its webhook configurations")
	f.StringVar(&w.service, "webhook-service", "", "the runner's --webhook-service: it registers its webhook configurations")
	f.StringVar(&w.name, "webhook-name", "", "the runner's --webhook-name (default: jsinformer-<the --service-account's namespace>)")
	f.StringVar(&w.certDir, "webhook-cert-dir", "", "the runner's --webhook-cert-dir: its certificate comes from files, not from a Secret")
	f.BoolVar(dryRun, "dry-run", false, "the runner's --dry-run: it registers no webhook configuration")
}
