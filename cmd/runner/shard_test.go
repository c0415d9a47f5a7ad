package main

import (
	"bufio"
	"bytes"
	"encoding/json"
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
	return se.startWith(t, id, se.cp.Kubeconfig, extra...)
}

func (se *shardEnv) startWith(t *testing.T, id, kubeconfig string, extra ...string) *shardReplica {
	t.Helper()
	metrics := freeAddr(t)
	args := append([]string{"--sharded", "--leader-elect-identity", id, "--leader-elect-resource-namespace", se.ns,
		"--leader-elect-lease-duration", testLease.String(), "--leader-elect-renew-deadline", testRenew.String(),
		"--leader-elect-retry-period", testRetry.String(), "--metrics-addr", metrics}, extra...)
	r := &shardReplica{replica: se.startPlain(t, id, kubeconfig, args...), id: id, metrics: metrics}
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
	if err := se.applyErr(t, names, v, create); err != nil {
		t.Fatal(err)
	}
}

func (se *shardEnv) applyErr(t *testing.T, names []string, v string, create bool) error {
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
			return err
		}
	}
	return nil
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
	found := overlaps(calls, time.Now())
	for _, o := range found[:min(5, len(found))] {
		t.Error(o)
	}
	if len(found) > 0 {
		t.Errorf("%d overlapping calls in all", len(found))
	}
}

// overlaps describes every pair of calls on one key by two replicas that overlap in time; a
// call still running ends now.
func overlaps(calls []shardCall, now time.Time) []string {
	byName := map[string][]shardCall{}
	for _, c := range calls {
		if c.end.IsZero() {
			c.end = now
		}
		byName[c.name] = append(byName[c.name], c)
	}
	var out []string
	for name, cs := range byName {
		for i, a := range cs {
			for _, b := range cs[i+1:] {
				if a.replica != b.replica && a.begin.Before(b.end) && b.begin.Before(a.end) {
					out = append(out, fmt.Sprintf("%s handled by %s (%s–%s) and %s (%s–%s) at once", name,
						a.replica, a.begin.Format("15:04:05.000"), a.end.Format("15:04:05.000"),
						b.replica, b.begin.Format("15:04:05.000"), b.end.Format("15:04:05.000")))
				}
			}
		}
	}
	return out
}

// The overlap check can fail: it sees two replicas' calls that overlap, and only those.
func TestOverlapsSeesTwoHandlersAtOnce(t *testing.T) {
	t.Parallel()
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	tests := []struct {
		name  string
		calls []shardCall
		want  int
	}{
		{"one after the other", []shardCall{{replica: "a", name: "x", begin: at(0), end: at(5)}, {replica: "b", name: "x", begin: at(6), end: at(9)}}, 0},
		{"overlapping", []shardCall{{replica: "a", name: "x", begin: at(0), end: at(5)}, {replica: "b", name: "x", begin: at(4), end: at(9)}}, 1},
		{"still running", []shardCall{{replica: "a", name: "x", begin: at(0)}, {replica: "b", name: "x", begin: at(4), end: at(9)}}, 1},
		{"same replica", []shardCall{{replica: "a", name: "x", begin: at(0), end: at(5)}, {replica: "a", name: "x", begin: at(4), end: at(9)}}, 0},
		{"other keys", []shardCall{{replica: "a", name: "x", begin: at(0), end: at(5)}, {replica: "b", name: "y", begin: at(4), end: at(9)}}, 0},
	}
	for _, tt := range tests {
		if got := overlaps(tt.calls, at(100)); len(got) != tt.want {
			t.Errorf("%s: %d overlaps %v, want %d", tt.name, len(got), got, tt.want)
		}
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

	t.Run("kill -9: the others take its keys within the lease duration plus 2s, changes delivered", func(t *testing.T) {
		c := se.replicas["shard-c"]
		var lost []string
		for _, n := range names {
			if sharding.NewRing(ids...).Owner(se.key(n)) == c.id {
				lost = append(lost, n)
			}
		}
		c.stopped = time.Now()
		if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-c.done
		se.apply(t, lost, "2", false) // made while the keys are moving
		se.waitMembers(t, "shard-a", "shard-b")
		moved := time.Since(c.stopped)
		last := se.waitHandled(t, lost, "2", 60*time.Second)
		t.Logf("the killed replica's %d keys moved %v after the kill; the last was handled again %v after it",
			len(lost), moved.Round(time.Millisecond), last.Sub(c.stopped).Round(time.Millisecond))
		if moved > testLease+2*time.Second {
			t.Errorf("the killed replica's keys moved in %v, want within the lease duration (%v) plus 2s", moved, testLease)
		}
		if moves := se.replicas["shard-a"].metricValue(t, "jsinformer_shard_moves_total"); moves < 2 {
			t.Errorf("shard-a applied %v ring changes, want at least 2 (joining, then c gone)", moves)
		}
		two := sharding.NewRing("shard-a", "shard-b")
		for _, call := range se.allCalls(t) {
			if call.v == "2" && call.replica != two.Owner(se.key(call.name)) {
				t.Errorf("%s v=2 handled by %s, its owner is %s", call.name, call.replica, two.Owner(se.key(call.name)))
			}
		}
	})
	noOverlap(t, se.allCalls(t))

	t.Run("SIGTERM: the others take its keys at once", func(t *testing.T) {
		b := se.replicas["shard-b"]
		var lost []string
		for _, n := range names {
			if sharding.NewRing("shard-a", "shard-b").Owner(se.key(n)) == b.id {
				lost = append(lost, n)
			}
		}
		stopped := time.Now()
		if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		se.waitMembers(t, "shard-a")
		took := time.Since(stopped)
		t.Logf("shard-a acted on a ring of one %v after shard-b got SIGTERM", took.Round(time.Millisecond))
		if took > 2*time.Second+leaderSlack {
			t.Errorf("shard-b's keys moved %v after SIGTERM, want at once (about a retry period)", took)
		}
		<-b.done
		b.stopped = time.Now()
		if b.err != nil {
			t.Errorf("shard-b exited with %v after SIGTERM, want 0", b.err)
		}
		se.apply(t, lost, "3", false)
		se.waitHandled(t, lost, "3", 30*time.Second)
	})
	noOverlap(t, se.allCalls(t))

	t.Run("scaling 1 to 3 to 2 under writes never has a key handled by two replicas", func(t *testing.T) {
		stop, final := make(chan struct{}), make(chan string, 1)
		var writeErr error
		var writer sync.WaitGroup
		writer.Go(func() {
			for round := 4; ; round++ {
				v := strconv.Itoa(round)
				if writeErr = se.applyErr(t, names, v, false); writeErr != nil {
					final <- ""
					return
				}
				select {
				case <-stop:
					final <- v
					return
				default:
				}
			}
		})
		se.start(parent, "shard-d")
		se.start(parent, "shard-e")
		se.waitMembers(t, "shard-a", "shard-d", "shard-e")
		d := se.replicas["shard-d"]
		if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		<-d.done
		d.stopped = time.Now()
		se.waitMembers(t, "shard-a", "shard-e")
		close(stop)
		last := <-final
		writer.Wait()
		if writeErr != nil {
			t.Fatal(writeErr)
		}
		se.waitHandled(t, names, last, 60*time.Second) // the writes made while scaling all arrived
		v := "final"                                   // and once the ring is settled, each object is handled by its owner only
		se.apply(t, names, v, false)
		se.waitHandled(t, names, v, 60*time.Second)
		ring := sharding.NewRing("shard-a", "shard-e")
		for _, call := range se.allCalls(t) {
			if call.v == v && call.replica != ring.Owner(se.key(call.name)) {
				t.Errorf("%s v=%s handled by %s, its owner is %s", call.name, v, call.replica, ring.Owner(se.key(call.name)))
			}
		}
		t.Logf("%d calls in all, the last round v=%s", len(se.allCalls(t)), v)
	})
	noOverlap(t, se.allCalls(t))

	t.Run("a replica cut off from the API server stops before the others take its keys, keeps running and rejoins", func(t *testing.T) {
		proxy := newOutageProxy(parent, strings.TrimPrefix(cp.Config.Host, "https://"))
		f := se.startWith(parent, "shard-f", kubeconfigWith(parent, "https://"+proxy.addr(), cp.Config.BearerToken))
		se.waitMembers(t, "shard-a", "shard-e", "shard-f")
		proxy.down()
		fenced := f.waitLog(t, fenceLog, "", 30*time.Second).Time
		se.waitMembers(t, "shard-a", "shard-e")
		var fKeys []string
		three := sharding.NewRing("shard-a", "shard-e", "shard-f")
		for _, n := range names {
			if three.Owner(se.key(n)) == "shard-f" {
				fKeys = append(fKeys, n)
			}
		}
		se.apply(t, fKeys, "after-cut", false)
		se.waitHandled(t, fKeys, "after-cut", 30*time.Second)
		select {
		case <-f.done:
			t.Fatalf("shard-f exited when cut off: %v", f.err)
		default:
		}
		back := time.Now()
		proxy.up()
		se.waitMembers(t, "shard-a", "shard-e", "shard-f")
		se.handledSince(t, fKeys, back, three, 30*time.Second) // its keys replayed on rejoining
		for _, c := range f.calls(t) {
			if c.begin.After(fenced) && c.begin.Before(back) {
				t.Errorf("shard-f began a call on %s at %v, fenced since %v", c.name, c.begin, fenced)
			}
		}
		se.apply(t, fKeys, "rejoined", false)
		se.waitHandled(t, fKeys, "rejoined", 30*time.Second)
	})
	noOverlap(t, se.allCalls(t))
}

var _ = syscall.SIGKILL
