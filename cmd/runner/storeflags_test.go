package main

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/jsinformer/jsinformer/store"
)

// runner rbac --store grants the store's ConfigMap verbs in the runner's namespace, and
// --check --store finds a file without them lacking.
func TestRBACStore(t *testing.T) {
	t.Parallel()
	dir := rbacFolder(t)
	out, err := execute(t, t.Context(), "rbac", "--scripts", dir, "--service-account", "ops/runner", "--store")
	if err != nil {
		t.Fatal(err)
	}
	want := "kind: Role\nmetadata:\n  name: runner\n  namespace: ops\n  labels:\n    app.kubernetes.io/name: jsinformer\nrules:\n" +
		"  # (--store): ctx.store: the scripts' stores (delete: after --store-retention)\n  - apiGroups: [\"\"]\n    resources: [configmaps]\n    verbs: [create, delete, get, list, update]\n"
	if !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	if check, err := execute(t, t.Context(), "rbac", "--scripts", dir, "--store", "--check", rbacFile(t, out), "--strict"); err != nil {
		t.Errorf("the printed RBAC fails its own check: %v\n%s", err, check)
	}
	without, err := execute(t, t.Context(), "rbac", "--scripts", dir)
	if err != nil {
		t.Fatal(err)
	}
	check, err := execute(t, t.Context(), "rbac", "--scripts", dir, "--store", "--check", rbacFile(t, without))
	if exitCode(err) != 1 || !strings.Contains(check, "missing: (--store) needs update configmaps in the runner's namespace") {
		t.Errorf("check without the store's rules = %v:\n%s", err, check)
	}
}

func TestStoreFlags(t *testing.T) {
	t.Parallel()
	parse := func(args ...string) (*store.Options, error) {
		return parseDry(t, false, args...)
	}
	if _, err := parseDry(t, true, "--store"); err == nil || !strings.Contains(err.Error(), "--dry-run") {
		t.Errorf("--store with --dry-run: %v", err)
	}
	if opts, err := parse(); opts != nil || err != nil {
		t.Errorf("without --store: %v, %v; want no store", opts, err)
	}
	opts, err := parse("--store", "--store-namespace", "st", "--store-max-keys", "7")
	if err != nil || opts.Namespace != "st" || opts.Limits.MaxKeys != 7 || opts.Shards != store.DefaultShards ||
		opts.Limits.MaxValueBytes != store.DefaultMaxValueBytes {
		t.Errorf("options = %+v, %v", opts, err)
	}
	if _, err := parse("--store", "--store-max-value-bytes", "0"); err == nil {
		t.Error("a zero limit was accepted")
	}
	if opts.Retention != store.DefaultRetention {
		t.Errorf("retention = %v; want the default %v", opts.Retention, store.DefaultRetention)
	}
	if opts, err := parse("--store", "--store-retention", "0"); err != nil || opts.Retention != 0 {
		t.Errorf("--store-retention 0 = %+v, %v; want kept forever", opts, err)
	}
	if _, err := parse("--store", "--store-retention", "-1h"); err == nil {
		t.Error("a negative retention was accepted")
	}
}

func parseDry(t *testing.T, dryRun bool, args ...string) (*store.Options, error) {
	t.Helper()
	var s storeFlags
	f := pflag.NewFlagSet("t", pflag.ContinueOnError)
	s.add(f)
	if err := f.Parse(args); err != nil {
		t.Fatal(err)
	}
	return s.options(dryRun)
}
