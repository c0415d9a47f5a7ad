package dynamicinformer_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/shardrange"
)

// payload is the data of the test's config maps: bytes that dominate what the server sends.
const payload = 4096

// TestBytesReceived runs a full and a partitioned informer over the same config maps, listing
// and streaming, against an API server with ShardedListAndWatch on and one without. After the
// initial sync each has counted about as many bytes as the API server sends for the same list
// fetched directly (the partition's list where the server filters, the whole list where it
// does not); big config maps created afterwards, one outside the partition and one in it, add
// both to the full informer's count and, where the server filters, only the second to the
// partitioned one's. On a release without the gate (make test-compat) the gate-on cases run
// on a server without it and want the gate-off cases' counts.
func TestBytesReceived(t *testing.T) {
	t.Parallel()
	server := gatedServer(t)
	gated := server.Config
	admin := kubernetes.NewForConfigOrDie(env.Config)
	cases := []struct {
		name      string
		cfg       *rest.Config
		streaming bool
		filters   bool // the API server filters by shardSelector
	}{
		{"gate on, list", gated, false, server.Served},
		{"gate on, streaming", gated, true, server.Served},
		{"gate off, list", env.Config, false, false},
		{"gate off, streaming", env.Config, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := shardrange.Partition{Field: shardrange.Namespace, Mask: halves}
			label := uniqueName("bytes")
			in, out := splitNamespaces(t, admin, p, 8)
			for _, ns := range append(slices.Clone(in), out...) {
				for j := range 4 {
					createWithData(t, admin, ns, fmt.Sprintf("cm%d", j), label, payload)
				}
			}
			selector := "shardtest=" + label
			client, err := dynamicinformer.NewClient(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			f := dynamicinformer.NewFactory(client, dynamicinformer.Options{StreamingLists: tc.streaming})
			defer f.Shutdown()
			full := dynamicinformer.Key{GVR: configmaps, LabelSelector: selector}
			part := dynamicinformer.Key{GVR: configmaps, LabelSelector: selector, Partition: p}
			for _, key := range []dynamicinformer.Key{full, part} {
				inf, err := f.Acquire(key)
				if err != nil {
					t.Fatal(err)
				}
				defer inf.Release()
				waitSynced(t, inf.Informer())
			}

			whole := directListSize(t, tc.cfg, selector, "")
			partSize := whole
			if tc.filters {
				partSize = directListSize(t, tc.cfg, selector, p.Selector())
				if partSize >= whole*3/4 {
					t.Fatalf("the API server sends %d bytes for the partition and %d for all: the test needs a smaller partition", partSize, whole)
				}
			}
			checkNear(t, "full informer", bytesReceived(t, f, full), whole)
			checkNear(t, "partitioned informer", bytesReceived(t, f, part), partSize)

			// A big config map outside the partition, then one in it: once the second is
			// cached by both, both events have been received.
			fullBefore, partBefore := bytesReceived(t, f, full), bytesReceived(t, f, part)
			const big = 64 << 10
			createWithData(t, admin, out[0], "big", label, big)
			createWithData(t, admin, in[0], "big", label, big)
			waitFor(t, func() bool {
				return cachedHas(t, f, full, in[0]+"/big") && cachedHas(t, f, part, in[0]+"/big")
			}, func() string { return "the big config map in the partition was not cached by both informers" })
			if grew := bytesReceived(t, f, full) - fullBefore; grew < 2*big {
				t.Errorf("the full informer's bytes grew by %d for two events of over %d bytes each", grew, big)
			}
			grew := bytesReceived(t, f, part) - partBefore
			switch {
			case grew < big:
				t.Errorf("the partitioned informer's bytes grew by %d for an event of over %d bytes", grew, big)
			case tc.filters && grew >= 2*big:
				t.Errorf("the partitioned informer's bytes grew by %d: the event outside its partition was sent to it", grew)
			case !tc.filters && grew < 2*big:
				t.Errorf("the partitioned informer's bytes grew by %d: without server filtering both events of over %d bytes reach it", grew, big)
			}
		})
	}
}

// splitNamespaces creates n namespaces, retrying names until some are in p and some out, and
// returns them split.
func splitNamespaces(t *testing.T, client *kubernetes.Clientset, p shardrange.Partition, n int) (in, out []string) {
	t.Helper()
	for len(in)+len(out) < n || len(in) == 0 || len(out) == 0 {
		if len(in)+len(out) > 4*n {
			t.Fatalf("%d namespaces, %d in %s: the test needs both", len(in)+len(out), len(in), p)
		}
		// Names that differ in their first byte: FNV-1a hardly carries the last ones into the
		// hash's top bits (docs/sharding.md), so uniqueName's alone may all fall in one half.
		ns := fmt.Sprintf("%c-%s", 'a'+len(in)+len(out), uniqueName("bytes"))
		createNamespace(t, client, ns)
		if p.Contains(shardrange.Hash(ns)) {
			in = append(in, ns)
		} else {
			out = append(out, ns)
		}
	}
	return in, out
}

func createWithData(t *testing.T, client *kubernetes.Clientset, ns, name, label string, size int) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"shardtest": label}},
		Data: map[string]string{"data": strings.Repeat("x", size)}}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create config map %s/%s: %v", ns, name, err)
	}
}

// directListSize is the size of the body the API server sends for a list of the config maps
// of selector (and shardSelector, if any), fetched without an informer.
func directListSize(t *testing.T, cfg *rest.Config, selector, shardSelector string) uint64 {
	t.Helper()
	req := kubernetes.NewForConfigOrDie(cfg).CoreV1().RESTClient().Get().AbsPath("/api/v1/configmaps").
		Param("labelSelector", selector)
	if shardSelector != "" {
		req = req.Param("shardSelector", shardSelector)
	}
	body, err := req.DoRaw(t.Context())
	if err != nil {
		t.Fatalf("list config maps directly: %v", err)
	}
	return uint64(len(body))
}

// checkNear fails unless got is want within what a streaming list's frames, its closing
// bookmark and a partition probe add (a few percent and a few KB) and what a list's other
// resourceVersion takes away.
func checkNear(t *testing.T, what string, got, want uint64) {
	t.Helper()
	if got < want*95/100 || got > want*110/100+16<<10 {
		t.Errorf("%s counted %d bytes received; the API server sends %d for the same list", what, got, want)
	}
}

func bytesReceived(t *testing.T, f *dynamicinformer.Factory, key dynamicinformer.Key) uint64 {
	t.Helper()
	for _, h := range f.Health() {
		if h.Key == key {
			return h.BytesReceived
		}
	}
	t.Fatalf("no health for informer %s", key)
	return 0
}

// cachedHas reports whether the running informer of key caches the object "ns/name".
func cachedHas(t *testing.T, f *dynamicinformer.Factory, key dynamicinformer.Key, nsName string) bool {
	t.Helper()
	inf, err := f.Acquire(key)
	if err != nil {
		t.Fatal(err)
	}
	defer inf.Release()
	_, ok, err := inf.Informer().GetStore().GetByKey(nsName)
	return err == nil && ok
}
