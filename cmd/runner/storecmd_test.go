package main

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/store"
)

// runner store list, show and delete against a store a runner wrote: list counts each
// script's and shared namespace's keys, show prints readable values only (all with
// --show-values), delete removes one key or a whole store; mistakes and missing rights are
// clear errors.
func TestStoreCommand(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	cs := kubernetes.NewForConfigOrDie(cp.Config)
	ns := "store-cli"
	if _, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := store.New(cs.CoreV1(), store.Options{Namespace: ns, Shards: 2}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	const secret = "SECRET-c0ffee"
	for _, w := range []struct {
		sc       *store.Scope
		key, val string
		readable bool
	}{
		{st.Scope("notify.js"), "token", `"` + secret + `"`, false},
		{st.Scope("notify.js"), "pub/last", `"2026-01-01"`, true},
		{st.Shared("team-a"), "owner", `"ops"`, true},
	} {
		if _, err := w.sc.Set(t.Context(), w.key, json.RawMessage(w.val), store.SetOptions{Readable: w.readable}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	run := func(args ...string) (string, error) {
		return execute(t, t.Context(), append([]string{"store"}, append(args, "--kubeconfig", cp.Kubeconfig, "--store-namespace", ns)...)...)
	}
	out, err := run("list")
	if err != nil || !lineWith(out, "script", "notify.js", "2") || !lineWith(out, "shared", "team-a", "1") {
		t.Fatalf("list = %v\n%s", err, out)
	}
	out, err = run("show", "notify.js")
	if err != nil || strings.Contains(out, secret) || !lineWith(out, "token", "(not readable)") || !lineWith(out, "pub/last", `"2026-01-01"`) {
		t.Fatalf("show = %v\n%s", err, out)
	}
	if out, err = run("show", "notify.js", "--show-values"); err != nil || !strings.Contains(out, secret) {
		t.Fatalf("show --show-values = %v\n%s", err, out)
	}
	var keys []storeKey
	out, err = run("show", "--shared", "team-a", "-o", "json")
	if err != nil || json.Unmarshal([]byte(out), &keys) != nil || len(keys) != 1 || string(keys[0].Value) != `"ops"` {
		t.Fatalf("show --shared -o json = %v\n%s", err, out)
	}
	if out, err = run("delete", "notify.js", "token"); err != nil || !strings.Contains(out, `deleted key "token"`) {
		t.Fatalf("delete key = %v\n%s", err, out)
	}
	if entries, _ := store.Entries(t.Context(), cs.CoreV1(), ns, store.ScriptID("notify.js"), time.Now()); len(entries) != 1 {
		t.Fatalf("after delete key: %+v; want pub/last only", entries)
	}
	if out, err = run("delete", "notify.js"); err != nil || !strings.Contains(out, "deleted the store of script notify.js") {
		t.Fatalf("delete = %v\n%s", err, out)
	}
	if out, _ := run("list"); strings.Contains(out, "notify.js") {
		t.Fatalf("list after delete:\n%s", out)
	}
	for _, tc := range []struct {
		args []string
		want string
		code int // -1: a plain error (exit 1)
	}{
		{[]string{"show"}, "name a script", 2},
		{[]string{"show", "x.js", "--shared", "team-a"}, "not both", 2},
		{[]string{"show", "--shared", "Team_A"}, "Team_A", 2},
		{[]string{"delete", "notify.js"}, "has no store data in namespace store-cli", -1},
		{[]string{"delete", "--shared", "team-a", "nope"}, `has no key "nope"`, -1},
		{[]string{"list", "--as", "nobody"}, "your kubeconfig user needs list on configmaps there", -1},
	} {
		_, err := run(tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != tc.code {
			t.Errorf("store %v: %v (exit %d); want %q, exit %d", tc.args, err, exitCode(err), tc.want, tc.code)
		}
	}
}

// lineWith reports whether a line of out has every field, in order.
func lineWith(out string, fields ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		rest, ok := line, true
		for _, f := range fields {
			i := strings.Index(rest, f)
			if i < 0 {
				ok = false
				break
			}
			rest = rest[i+len(f):]
		}
		if ok {
			return true
		}
	}
	return false
}
