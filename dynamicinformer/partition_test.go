package dynamicinformer_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/shardrange"
)

// shardedServer is the API server of the gate-on cases, on the package's etcd, shared by the
// tests of this file (started by the first, stopped by TestMain's Stop): one with
// ShardedListAndWatch on, or, where the control plane's release does not know the gate (make
// test-compat's older ones), the package's own, which ignores shardSelector.
var shardedServer struct {
	once sync.Once
	s    *controlplane.ShardedList
	err  error
}

// gatedServer returns the API server of the gate-on cases; where it does not serve the gate it
// says so in the test's log.
func gatedServer(t *testing.T) *controlplane.ShardedList {
	t.Helper()
	cp := controlplane.Require(t, env)
	shardedServer.once.Do(func() {
		shardedServer.s, shardedServer.err = cp.StartShardedList(t.Context())
	})
	if shardedServer.err != nil {
		t.Fatal(shardedServer.err)
	}
	if !shardedServer.s.Served {
		t.Logf("kube-apiserver %s does not know %s: the gate-on cases run on a server without it and want the fallback", shardedServer.s.Version, controlplane.ShardedListAndWatch)
	}
	return shardedServer.s
}

// halves is the first half of the hash space: slices 0-127.
var halves = shardrange.Mask{^uint64(0), ^uint64(0)}

// alternating holds every other slice: the longest selector a partition can have.
var alternating = shardrange.Mask{0x5555555555555555, 0x5555555555555555, 0x5555555555555555, 0x5555555555555555}

// population creates nsCount namespaces with perNS config maps each, labelled with a label
// unique to the call, and returns the label selector and the config maps created.
func population(t *testing.T, client *kubernetes.Clientset, nsCount, perNS int) (string, []*corev1.ConfigMap) {
	t.Helper()
	label := uniqueName("shard")
	var out []*corev1.ConfigMap
	for i := range nsCount {
		ns := uniqueName(fmt.Sprintf("shard%d", i))
		createNamespace(t, client, ns)
		for j := range perNS {
			out = append(out, createLabelled(t, client, ns, fmt.Sprintf("cm%d", j), label))
		}
	}
	return "shardtest=" + label, out
}

func createLabelled(t *testing.T, client *kubernetes.Clientset, ns, name, label string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"shardtest": label}}}
	created, err := client.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create config map %s/%s: %v", ns, name, err)
	}
	return created
}

// inPartition returns the sorted "ns/name" of the config maps p keeps, by the client's hash.
func inPartition(p shardrange.Partition, cms []*corev1.ConfigMap) []string {
	var out []string
	for _, cm := range cms {
		v := cm.Namespace
		if p.Field == shardrange.UID {
			v = string(cm.UID)
		}
		if p.Contains(shardrange.Hash(v)) {
			out = append(out, cm.Namespace+"/"+cm.Name)
		}
	}
	slices.Sort(out)
	return out
}

// mustSplit fails unless p keeps some of cms and leaves some out: a test that partitions
// must see both.
func mustSplit(t *testing.T, p shardrange.Partition, cms []*corev1.ConfigMap) []string {
	t.Helper()
	in := inPartition(p, cms)
	if len(in) == 0 || len(in) == len(cms) {
		t.Fatalf("partition %s keeps %d of %d config maps; the test needs some in and some out", p, len(in), len(cms))
	}
	return in
}

// TestServerHashIsTheClients lists with shardSelector from an API server with the feature on:
// it echoes the selector, and sends exactly the objects shardrange's hash puts in the
// partition, by namespace and by uid, for a one-range selector and for the longest one (128
// ranges). On a release without the gate (make test-compat) it checks what the fallback
// relies on instead: the API server ignores the selector, sending every object and no
// shardInfo.
func TestServerHashIsTheClients(t *testing.T) {
	t.Parallel()
	server := gatedServer(t)
	gated := kubernetes.NewForConfigOrDie(server.Config)
	selector, cms := population(t, kubernetes.NewForConfigOrDie(env.Config), 16, 3)
	var all []string // what a server without the gate sends
	for _, cm := range cms {
		all = append(all, cm.Namespace+"/"+cm.Name)
	}
	slices.Sort(all)
	for _, field := range []shardrange.Field{shardrange.Namespace, shardrange.UID} {
		for _, mask := range []shardrange.Mask{halves, alternating} {
			p := shardrange.Partition{Field: field, Mask: mask}
			want, wantInfo := mustSplit(t, p, cms), p.Selector()
			if !server.Served {
				want, wantInfo = all, ""
			}
			list, err := gated.CoreV1().ConfigMaps("").List(t.Context(), metav1.ListOptions{LabelSelector: selector, ShardSelector: p.Selector()})
			if err != nil {
				t.Fatalf("%s: list with shardSelector: %v", p, err)
			}
			if info := list.ShardInfo; (info == nil) != (wantInfo == "") || info != nil && info.Selector != wantInfo {
				t.Errorf("%s: shardInfo %+v, want %q (kube-apiserver %s, gate served: %v)", p, info, wantInfo, server.Version, server.Served)
			}
			var got []string
			for _, cm := range list.Items {
				got = append(got, cm.Namespace+"/"+cm.Name)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s: kube-apiserver %s (gate served: %v) sent %v, want %v", p, server.Version, server.Served, got, want)
			}
		}
	}
}

// TestPartitionedInformer runs partitioned informers, by namespace and by uid, listing and
// streaming, against an API server with ShardedListAndWatch on and one without. Both cache
// exactly the partition's objects, initial and created later; the first is in server mode
// and received only those objects over the wire; the second is in client mode, received them
// all and kept the same ones. On a release without the gate (make test-compat) the gate-on
// cases run on a server without it and want the second's results.
func TestPartitionedInformer(t *testing.T) {
	t.Parallel()
	server := gatedServer(t)
	gated, gatedMode := server.Config, dynamicinformer.ShardClient
	if server.Served {
		gatedMode = dynamicinformer.ShardServer
	}
	admin := kubernetes.NewForConfigOrDie(env.Config)
	cases := []struct {
		name      string
		cfg       *rest.Config
		field     shardrange.Field
		streaming bool
		mode      dynamicinformer.ShardMode
	}{
		{"gate on, namespace, list", gated, shardrange.Namespace, false, gatedMode},
		{"gate on, uid, list", gated, shardrange.UID, false, gatedMode},
		{"gate on, namespace, streaming", gated, shardrange.Namespace, true, gatedMode},
		{"gate on, uid, streaming", gated, shardrange.UID, true, gatedMode},
		{"gate off, namespace, list", env.Config, shardrange.Namespace, false, dynamicinformer.ShardClient},
		{"gate off, uid, list", env.Config, shardrange.UID, false, dynamicinformer.ShardClient},
		{"gate off, namespace, streaming", env.Config, shardrange.Namespace, true, dynamicinformer.ShardClient},
		{"gate off, uid, streaming", env.Config, shardrange.UID, true, dynamicinformer.ShardClient},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			selector, cms := population(t, admin, 16, 3)
			p := shardrange.Partition{Field: tc.field, Mask: halves}
			want := mustSplit(t, p, cms)
			client, err := dynamicinformer.NewClient(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			f := dynamicinformer.NewFactory(client, dynamicinformer.Options{StreamingLists: tc.streaming})
			defer f.Shutdown()
			key := dynamicinformer.Key{GVR: configmaps, LabelSelector: selector, Partition: p}
			inf, err := f.Acquire(key)
			if err != nil {
				t.Fatal(err)
			}
			defer inf.Release()
			waitSynced(t, inf.Informer())
			if got := cachedNames(inf); !slices.Equal(got, want) {
				t.Fatalf("the informer caches %v, want the partition's %v", got, want)
			}
			st := shardStatus(t, f, key)
			if st.Mode != tc.mode || st.Reason == "" {
				t.Errorf("mode %q (%s), want %q with a reason", st.Mode, st.Reason, tc.mode)
			}
			if tc.mode == dynamicinformer.ShardClient && !strings.Contains(st.Reason, "no shardInfo") {
				t.Errorf("client mode because %q, want because the answer has no shardInfo", st.Reason)
			}
			checkCounts(t, st, len(cms), len(want), tc.mode)

			// Created later, in every namespace; then a barrier in the partition, so that once
			// it is cached every earlier event has been received.
			filteredBefore := filteredEvents(t, tc.cfg)
			label := selector[len("shardtest="):]
			var later []*corev1.ConfigMap
			name := uniqueName("later")
			for _, cm := range cms {
				if cm.Name == "cm0" {
					later = append(later, createLabelled(t, admin, cm.Namespace, name, label))
				}
			}
			inNS, _, _ := strings.Cut(want[0], "/")
			later = append(later, barrier(t, admin, p, inNS, label)...)
			all := append(slices.Clone(cms), later...)
			want = inPartition(p, all)
			waitFor(t, func() bool { return slices.Equal(cachedNames(inf), want) }, func() string {
				return fmt.Sprintf("the informer caches %v, want %v", cachedNames(inf), want)
			})
			checkCounts(t, shardStatus(t, f, key), len(all), len(want), tc.mode)
			// The API server's own count of the watch events its shard selectors filtered
			// out grew by at least the later objects outside the partition (other tests'
			// watches add to it too).
			if outside := len(later) - (len(want) - len(inPartition(p, cms))); tc.mode == dynamicinformer.ShardServer {
				if grew := filteredEvents(t, tc.cfg) - filteredBefore; grew < float64(outside) {
					t.Errorf("apiserver_watch_filtered_events_total for config maps grew by %v, want at least %d", grew, outside)
				}
			}
		})
	}
}

// barrier creates config maps in ns until one is in p, and returns them all, that one last.
func barrier(t *testing.T, client *kubernetes.Clientset, p shardrange.Partition, ns, label string) []*corev1.ConfigMap {
	t.Helper()
	if p.Field == shardrange.Namespace && !p.Contains(shardrange.Hash(ns)) {
		t.Fatalf("barrier: namespace %s is outside %s", ns, p)
	}
	var out []*corev1.ConfigMap
	for range 64 {
		cm := createLabelled(t, client, ns, uniqueName("barrier"), label)
		if out = append(out, cm); len(inPartition(p, []*corev1.ConfigMap{cm})) == 1 {
			return out
		}
	}
	t.Fatalf("barrier: 64 config maps created, none in %s", p)
	return nil
}

// filteredEvents is the API server's apiserver_watch_filtered_events_total for config maps
// (0 where it has no such series: the gate is off).
func filteredEvents(t *testing.T, cfg *rest.Config) float64 {
	t.Helper()
	body, err := kubernetes.NewForConfigOrDie(cfg).RESTClient().Get().AbsPath("/metrics").DoRaw(t.Context())
	if err != nil {
		t.Fatalf("read the API server's metrics: %v", err)
	}
	const series = `apiserver_watch_filtered_events_total{group="",resource="configmaps"} `
	for line := range strings.Lines(string(body)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), series); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("parse %q: %v", line, err)
			}
			return f
		}
	}
	return 0
}

// checkCounts: in server mode the informer received only its objects; in client mode it
// received all of them and kept its own.
func checkCounts(t *testing.T, st dynamicinformer.ShardStatus, all, in int, mode dynamicinformer.ShardMode) {
	t.Helper()
	received := uint64(all)
	if mode == dynamicinformer.ShardServer {
		received = uint64(in)
	}
	if st.Kept != uint64(in) || st.Received != received {
		t.Errorf("received %d objects and kept %d, want %d and %d (%d objects, %d in the partition)", st.Received, st.Kept, received, in, all, in)
	}
}

func cachedNames(inf *dynamicinformer.Informer) []string {
	var out []string
	for _, obj := range inf.Informer().GetStore().List() {
		u := obj.(*unstructured.Unstructured)
		out = append(out, u.GetNamespace()+"/"+u.GetName())
	}
	slices.Sort(out)
	return out
}

func shardStatus(t *testing.T, f *dynamicinformer.Factory, key dynamicinformer.Key) dynamicinformer.ShardStatus {
	t.Helper()
	for _, h := range f.Health() {
		if h.Key == key {
			return h.Shard
		}
	}
	t.Fatalf("no health for informer %s", key)
	return dynamicinformer.ShardStatus{}
}

// waitFor polls cond until it holds, failing with describe's text after 30 s.
func waitFor(t *testing.T, cond func() bool, describe func() string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(describe())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
