package main

import (
	"bufio"
	"encoding/json"
	"bytes"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/sharding"
)

// Sharding, tried on real runner processes (kill -9 and SIGTERM need them) with the leader
// tests' short durations. The script logs "begin" and "end" around every call with the
// object's name and data.v; the test reads the replicas' logs to see who handled what, when.

const shardObjects = 600

var configmaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

type shardEnv struct {
	*leaderEnv
	cp       *controlplane.ControlPlane
	replicas map[string]*shardReplica
}

type shardReplica struct {
	*replica
	id, metrics string
	stopped     time.Time // when the test killed it: a call begun and never ended ends here
}

// shardCall is one handler call a replica logged.
type shardCall struct {
	replica, name, v string
	initial          bool
	begin, end       time.Time
}

func newShardEnv(t *testing.T, cp *controlplane.ControlPlane, script string) *shardEnv {
	t.Helper()
	se := &shardEnv{leaderEnv: newLeaderEnvNamed(t, cp, fmt.Sprintf("shard-%d", time.Now().UnixNano())), cp: cp,
		replicas: map[string]*shardReplica{}}
	writeScript(t, se.scripts, "shard.js", strings.ReplaceAll(script, "NAMESPACE", se.ns))
	return se
}

// shardScript logs begin and end around each call, with a 2ms busy loop between, so that two
// replicas handling one key at once would show as overlapping intervals.
const shardScript = `function handle(cm, ctx, kind) {
  const name = cm.metadata.name, v = (cm.data && cm.data.v) || "";
  log.info("begin", { name, v, initial: !!ctx.isInInitialList });
  const until = Date.now() + 2; while (Date.now() < until) {}
  log.info("end", { name, v });
}
export default {
  watch: { resource: "v1/configmaps", namespace: "NAMESPACE" },
  onAdd(cm, ctx) { handle(cm, ctx); },
  onUpdate(old, cm, ctx) { handle(cm, ctx); },
};`

func (se *shardEnv) start(t *testing.T, id string, extra ...string) *shardReplica {
	t.Helper()
	metrics := freeAddr(t)
	args := append([]string{"--sharded", "--leader-elect-identity", id, "--leader-elect-resource-namespace", se.ns,
		"--leader-elect-lease-duration", testLease.String(), "--leader-elect-renew-deadline", testRenew.String(),
		"--leader-elect-retry-period", testRetry.String(), "--metrics-addr", metrics}, extra...)
	r := &shardReplica{replica: se.startPlain(t, id, se.cp.Kubeconfig, args...), id: id, metrics: metrics}
	se.replicas[id] = r
	return r
}

// waitMembers waits until every replica named reports a ring of len(ids) members.
func (se *shardEnv) waitMembers(t *testing.T, ids ...string) {
	t.Helper()
	for _, id := range ids {
		waitHTTP(t, "http://"+se.replicas[id].metrics+"/metrics", "jsinformer_shard_members "+strconv.Itoa(len(ids))+"\n")
	}
}

func objectName(i int) string { return fmt.Sprintf("cm-%04d", i) }

// apply creates the objects, or sets their data.v, from a few goroutines.
func (se *shardEnv) apply(t *testing.T, names []string, v string, create bool) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(names))
	next := make(chan string)
	for range 8 {
		wg.Go(func() {
			for name := range next {
				errs <- se.write(t, name, v, create)
			}
		})
	}
	for _, n := range names {
		next <- n
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func (se *shardEnv) write(t *testing.T, name, v string, create bool) error {
	c := se.dyn.Resource(configmaps).Namespace(se.ns)
	if create {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": se.ns}, "data": map[string]any{"v": v}}}
		_, err := c.Create(t.Context(), u, metav1.CreateOptions{})
		return err
	}
	_, err := c.Patch(t.Context(), name, types.MergePatchType, []byte(`{"data":{"v":"`+v+`"}}`), metav1.PatchOptions{})
	return err
}

// calls parses r's log into its handler calls; a call begun and not ended ends when the
// replica was stopped, or is still running (end zero) when it was not.
func (r *shardReplica) calls(t *testing.T) []shardCall {
	t.Helper()
	data, err := os.ReadFile(r.log)
	if err != nil {
		t.Fatal(err)
	}
	var out []shardCall
	open := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l struct {
			Time  time.Time `json:"time"`
			Msg   string    `json:"msg"`
			Attrs struct {
				Name, V string
				Initial bool
			} `json:"attrs"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		switch l.Msg {
		case "begin":
			open[l.Attrs.Name] = len(out)
			out = append(out, shardCall{replica: r.id, name: l.Attrs.Name, v: l.Attrs.V, initial: l.Attrs.Initial, begin: l.Time})
		case "end":
			if i, ok := open[l.Attrs.Name]; ok {
				out[i].end = l.Time
				delete(open, l.Attrs.Name)
			}
		}
	}
	for _, i := range open {
		out[i].end = r.stopped
	}
	return out
}

// allCalls is every replica's calls.
func (se *shardEnv) allCalls(t *testing.T) []shardCall {
	t.Helper()
	var out []shardCall
	for _, r := range se.replicas {
		out = append(out, r.calls(t)...)
	}
	return out
}

// noOverlap fails if two replicas' calls on one key overlap in time.
func noOverlap(t *testing.T, calls []shardCall) {
	t.Helper()
	byName := map[string][]shardCall{}
	for _, c := range calls {
		byName[c.name] = append(byName[c.name], c)
	}
	overlaps := 0
	for name, cs := range byName {
		for i, a := range cs {
			for _, b := range cs[i+1:] {
				if a.replica == b.replica {
					continue
				}
				aEnd, bEnd := a.end, b.end
				if aEnd.IsZero() {
					aEnd = time.Now()
				}
				if bEnd.IsZero() {
					bEnd = time.Now()
				}
				if a.begin.Before(bEnd) && b.begin.Before(aEnd) {
					if overlaps++; overlaps <= 5 {
						t.Errorf("%s handled by %s (%s–%s) and %s (%s–%s) at once", name, a.replica, a.begin.Format("15:04:05.000"),
							aEnd.Format("15:04:05.000"), b.replica, b.begin.Format("15:04:05.000"), bEnd.Format("15:04:05.000"))
					}
				}
			}
		}
	}
	if overlaps > 0 {
		t.Errorf("%d overlapping calls in all", overlaps)
	}
}

// waitHandled waits until every name was handled with data.v = v by some replica other than
// the ones excluded, and returns when the last of those calls ended.
func (se *shardEnv) waitHandled(t *testing.T, names []string, v string, within time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		last, missing := time.Time{}, []string{}
		seen := map[string]time.Time{}
		for _, c := range se.allCalls(t) {
			if c.v == v && !c.end.IsZero() {
				if _, ok := seen[c.name]; !ok || c.end.Before(seen[c.name]) {
					seen[c.name] = c.end
				}
			}
		}
		for _, n := range names {
			end, ok := seen[n]
			if !ok {
				missing = append(missing, n)
			} else if end.After(last) {
				last = end
			}
		}
		if len(missing) == 0 {
			return last
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d objects never handled with v=%s within %v, e.g. %v", len(missing), len(names), v, within, missing[:min(5, len(missing))])
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// metricValue reads one sample from r's /metrics.
func (r *shardReplica) metricValue(t *testing.T, sample string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + r.metrics + "/metrics") //nolint:noctx // test read
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if rest, ok := strings.CutPrefix(line, sample+" "); ok {
			f, err := strconv.ParseFloat(rest, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("%s serves no %s", r.id, sample)
	return 0
}

func (se *shardEnv) key(name string) string { return se.ns + "/" + name }

func TestShardedReplicas(t *testing.T) {
	cp := controlplane.Require(t, env)
	se := newShardEnv(t, cp, shardScript)
	parent := t
	names := make([]string, shardObjects)
	for i := range names {
		names[i] = objectName(i)
	}
	ids := []string{"shard-a", "shard-b", "shard-c"}
	for _, id := range ids {
		se.start(parent, id)
	}
	se.waitMembers(t, ids...)

	t.Run("every object is handled by exactly one replica, spread evenly", func(t *testing.T) {
		se.apply(t, names, "1", true)
		se.waitHandled(t, names, "1", 60*time.Second)
		by := map[string]map[string]bool{}
		for _, c := range se.allCalls(t) {
			if by[c.name] == nil {
				by[c.name] = map[string]bool{}
			}
			by[c.name][c.replica] = true
		}
		ring, counts := sharding.NewRing(ids...), map[string]int{}
		for _, n := range names {
			reps := slices.Sorted(maps.Keys(by[n]))
			if len(reps) != 1 {
				t.Errorf("%s handled by %v, want exactly one replica", n, reps)
				continue
			}
			if want := ring.Owner(se.key(n)); reps[0] != want {
				t.Errorf("%s handled by %s, its owner is %s", n, reps[0], want)
			}
			counts[reps[0]]++
		}
		total := 0.0
		for _, id := range ids {
			t.Logf("%s handled %d objects", id, counts[id])
			if c := counts[id]; c < shardObjects/3*8/10 || c > shardObjects/3*12/10 {
				t.Errorf("%s handled %d of %d, want %d ± 20%%", id, c, shardObjects, shardObjects/3)
			}
			total += se.replicas[id].metricValue(t, `jsinformer_shard_keys{script="shard.js"}`)
		}
		if total != shardObjects {
			t.Errorf("jsinformer_shard_keys sums to %v over the replicas, want %d", total, shardObjects)
		}
	})
	noOverlap(t, se.allCalls(t))
}

var _ = syscall.SIGKILL
