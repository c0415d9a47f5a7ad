package engine_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/status"
)

// TestUnlistableWatchIsReportedOnceAndStartsWhenGranted runs the runner as a ServiceAccount
// that may not list the configmaps a script watches: the informer is reported unhealthy and
// the missing list and watch are listed in the status, with one WARN naming the script,
// resource, namespace, verb and the rule to add, and no Forbidden repeated in the log
// (client-go's klog included, routed as the runner routes it) while the runner retries. Once
// granted, the script handles its objects without a restart. Not parallel: it routes klog,
// which is global, into its own log.
func TestUnlistableWatchIsReportedOnceAndStartsWhenGranted(t *testing.T) {
	cp := controlplane.Require(t, env)
	ns := uniqueName("nolist")
	client := admin(t)
	kube := kubernetes.NewForConfigOrDie(cp.Config)
	mustCreate(t, client, namespacesGVR, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
	if _, err := kube.CoreV1().ServiceAccounts(ns).Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "runner"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := kube.CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), "runner", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, client, configmapsGVR, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "seen", "namespace": ns}})

	// client-go's klog goes to its own sink at INFO and above, as cmd/runner routes it (at its
	// default level). Cleared after the engine has stopped: cleanups run last-registered first.
	klogged := &sink{}
	klog.SetSlogLogger(slog.New(atLeastInfo{klogged}).With("component", "client-go"))
	t.Cleanup(klog.ClearLogger)
	r := startEngine(t, nil, func(c *engine.Config) {
		c.RESTConfig = &rest.Config{Host: cp.Config.Host, BearerToken: tr.Status.Token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
		c.PermissionCheckInterval = time.Second
		engine.SetInformerRemindForTest(c, time.Second) // a reminder a second, were it logged
	})

	r.write(t, "cms.js", `export default { watch: { resource: "v1/configmaps", namespace: "`+ns+`" }, onAdd() {} };`)
	waitStatus(t, r.engine, "the informer unhealthy and list, watch missing", func(st status.Status) bool {
		inf := informerOf(st, ns)
		return inf != nil && !inf.Healthy && hasMissing(st, "cms.js", "list", ns) && hasMissing(st, "cms.js", "watch", ns)
	})
	// The informer retries with backoff (250 ms doubling, capped at 10 s): several retries,
	// and reminders a second, fall in this window.
	time.Sleep(8 * time.Second) // the window is what is tested: nothing to wait for
	isForbidden := func(rec record) bool {
		return rec.level >= slog.LevelWarn && strings.Contains(strings.ToLower(rec.msg+" "+rec.attrs["error"]), "forbidden")
	}
	if got := klogged.find(isForbidden); len(got) > 0 {
		t.Errorf("client-go logged %d WARN/ERROR records mentioning forbidden:\n%s", len(got), klogged.dump())
	}
	forbidden := r.log.find(isForbidden)
	if len(forbidden) != 1 {
		t.Fatalf("%d WARN/ERROR records mention forbidden while the watch retries; want 1:\n%s", len(forbidden), r.log.dump())
	}
	w := forbidden[0].attrs
	if w["scripts"] != "cms.js" || w["resource"] != "v1/configmaps" || w["namespace"] != ns || w["verb"] != "list" ||
		w["grant"] != "kubectl create role NAME -n "+ns+" --verb=list,watch --resource=configmaps" {
		t.Errorf("the WARN %s; want the script, resource, namespace, the refused verb and the rule to add", forbidden[0])
	}
	for _, rec := range r.log.find(msg("the runner lacks a permission a script needs", "script", "cms.js", "verb", "list", "namespace", ns)) {
		if !strings.Contains(rec.attrs["grant"], "--verb=list") {
			t.Errorf("the WARN of the missing list: %s; want the rule to add", rec)
		}
	}

	granted := time.Now()
	grantReadConfigMaps(t, client, ns, "system:serviceaccount:"+ns+":runner")
	waitStatus(t, r.engine, "the script handles its objects", func(st status.Status) bool {
		sc, ok := st.Script("cms.js")
		inf := informerOf(st, ns)
		return ok && sc.Handlers["onAdd"].Calls >= 1 && inf != nil && inf.Healthy && !hasMissing(st, "cms.js", "list", ns)
	})
	t.Logf("the script handled its object %s after the grant", time.Since(granted).Round(time.Millisecond))
}

func informerOf(st status.Status, ns string) *status.InformerStatus {
	for i := range st.Informers {
		if st.Informers[i].Namespace == ns {
			return &st.Informers[i]
		}
	}
	return nil
}

func hasMissing(st status.Status, script, verb, ns string) bool {
	for _, p := range st.Permissions {
		if p.Script == script && p.Verb == verb && p.Namespace == ns && p.Refused == 0 {
			return true
		}
	}
	return false
}

// atLeastInfo passes on records at INFO and above, as the runner's default level does.
type atLeastInfo struct{ slog.Handler }

func (a atLeastInfo) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (a atLeastInfo) WithAttrs(attrs []slog.Attr) slog.Handler {
	return atLeastInfo{a.Handler.WithAttrs(attrs)}
}
