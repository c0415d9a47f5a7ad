package controlplane_test

import (
	"net/http"
	"os/exec"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

var env *controlplane.ControlPlane

func TestMain(m *testing.M) { controlplane.Exit(m, &env) }

func TestVersionIsPinned(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	client := kubernetes.NewForConfigOrDie(cp.Config)
	v, err := client.Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("get /version: %v", err)
	}
	if v.GitVersion != "v1.37.2" {
		t.Fatalf("/version says %q, want v1.37.2", v.GitVersion)
	}
	var code int
	client.Discovery().RESTClient().Get().AbsPath("/readyz").Do(t.Context()).StatusCode(&code)
	if code != http.StatusOK {
		t.Fatalf("/readyz = %d", code)
	}
}

func TestKubeconfigWorks(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	cfg, err := clientcmd.BuildConfigFromFlags("", cp.Kubeconfig)
	if err != nil {
		t.Fatalf("load kubeconfig: %v", err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	if _, err := client.CoreV1().Namespaces().Get(t.Context(), "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("get default namespace via kubeconfig: %v", err)
	}
}

func TestCreateListWatchDelete(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	ctx := t.Context()
	client := kubernetes.NewForConfigOrDie(cp.Config)
	cms := client.CoreV1().ConfigMaps("default")
	w, err := cms.Watch(ctx, metav1.ListOptions{LabelSelector: "test=crud"})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "crud", Labels: map[string]string{"test": "crud"}},
		Data: map[string]string{"k": "v"}}
	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "test=crud"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Data["k"] != "v" {
		t.Fatalf("list = %v, %v; want the one configmap", list, err)
	}
	if err := cms.Delete(ctx, "crud", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	for _, want := range []watch.EventType{watch.Added, watch.Deleted} {
		select {
		case ev := <-w.ResultChan():
			if ev.Type != want {
				t.Fatalf("watch event %s, want %s", ev.Type, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no %s event within 30s", want)
		}
	}
}

func TestStopLeavesNoProcess(t *testing.T) {
	t.Parallel()
	controlplane.Require(t, env)
	cp, err := controlplane.Start(t.Context(), controlplane.Options{})
	if err != nil {
		t.Fatalf("start second control plane: %v", err)
	}
	dir := cp.Dir
	if err := cp.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if out, err := exec.Command("pgrep", "-f", dir).Output(); err == nil {
		t.Fatalf("processes still running after Stop: %s", out)
	}
}

// KnowsFeatureGate tells the gates the release knows from those it does not: WatchList (every
// supported release), ShardedListAndWatch (since v1.36), a made-up one (none). make
// test-compat runs it on each older release, where ShardedListAndWatch is unknown.
func TestKnowsFeatureGate(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	v, err := cp.ServerVersion(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	sharded := !utilversion.MustParseGeneric(v).LessThan(utilversion.MustParseGeneric("v1.36.0"))
	for _, tc := range []struct {
		gate  string
		known bool
	}{
		{"WatchList", true},
		{controlplane.ShardedListAndWatch, sharded},
		{"NoSuchGate", false},
	} {
		known, err := cp.KnowsFeatureGate(t.Context(), tc.gate)
		if err != nil {
			t.Fatal(err)
		}
		if known != tc.known {
			t.Errorf("kube-apiserver %s knows %s: %v, want %v", v, tc.gate, known, tc.known)
		}
	}
}
