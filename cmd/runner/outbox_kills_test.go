package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// Random kill -9 during a stream of once-keyed sends (issue 45, section 3): the outbox's
// guarantee (docs/once.md) checked by its effect, the posts a loopback receiver got per key.

var outboxKillSeed = flag.Uint64("outbox-kill-seed", 0,
	"replay TestOutboxRandomKillsDuringAStream with this seed (0: a new one, logged)")

// onceScript sends one outbox message per ConfigMap named once-*, keyed by its uid; deliver
// posts it to the receiver at ADDR with the key and ctx.delivery.interrupted as headers.
const onceScript = `export default {
  watch: { resource: "v1/configmaps", namespace: "NAMESPACE" },
  onAdd(cm, ctx) {
    if (cm.metadata.name.startsWith("once-")) ctx.outbox.send(cm.metadata.uid, { name: cm.metadata.name });
  },
  outbox: {
    attempts: 100, backoff: "200ms", maxBackoff: "1s",
    async deliver(message, ctx) {
      const res = await fetch("http://ADDR/hook", {
        method: "POST",
        headers: { "idempotency-key": ctx.delivery.key, "x-interrupted": String(ctx.delivery.interrupted) },
        body: JSON.stringify(message),
        signal: AbortSignal.timeout(5000),
      });
      if (!res.ok) throw new Error("receiver answered " + res.status);
    },
  },
};`

// streamReceiver counts the posts it receives per Idempotency-Key, each with whether it was
// marked interrupted, as a receiver that commits on receipt: a post counts as soon as it
// arrives, before the answer, which comes after a random delay (0–100ms) so that kills land
// mid-delivery.
type streamReceiver struct {
	addr string

	mu    sync.Mutex
	rnd   *rand.Rand
	posts map[string][]bool // by key: each post's x-interrupted, in order
}

func startStreamReceiver(t *testing.T, seed uint64) *streamReceiver {
	t.Helper()
	r := &streamReceiver{rnd: rand.New(rand.NewPCG(seed, 1)), posts: map[string][]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.addr = ln.Addr().String()
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() { // owned by the test: Close and wait in Cleanup
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() { _ = srv.Close(); <-done })
	return r
}

func (r *streamReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	key := req.Header.Get("Idempotency-Key")
	r.mu.Lock()
	r.posts[key] = append(r.posts[key], req.Header.Get("X-Interrupted") == "true")
	delay := time.Duration(r.rnd.IntN(100)) * time.Millisecond
	r.mu.Unlock()
	select {
	case <-time.After(delay):
		w.WriteHeader(http.StatusOK)
	case <-req.Context().Done(): // the runner was killed mid-delivery
	}
}

func (r *streamReceiver) postsOf(key string) []bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.posts[key])
}

// killCluster is two runner processes sharing the outbox: a leader-elected pair or two
// --sharded replicas. Used from the test's goroutine only.
type killCluster struct {
	le     *leaderEnv
	se     *shardEnv // nil: a leader-elected pair
	kube   string
	flags  []string
	live   map[string]*replica
	all    []*replica        // every process started, killed ones included, for the logs
	debugs map[string]string // by name: the debug API's address
}

// start starts (or restarts, after a kill) the replica called name.
func (c *killCluster) start(t *testing.T, name string) {
	t.Helper()
	debug := freeAddr(t)
	flags := append(slices.Clone(c.flags), "--debug-addr", debug)
	if c.se != nil {
		c.live[name] = c.se.start(t, name, flags...).replica
	} else {
		c.live[name] = c.le.start(t, name, c.kube, flags...)
	}
	c.all = append(c.all, c.live[name])
	c.debugs[name] = debug
}

func (c *killCluster) names() []string {
	var out []string
	for n := range c.live {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// victim picks the replica to kill: the leader when one has said so (a standby delivers
// nothing, so killing it proves little), else one at random; any of the --sharded ones.
func (c *killCluster) victim(t *testing.T, rnd *rand.Rand) string {
	t.Helper()
	names := c.names()
	if c.se == nil {
		for _, n := range names {
			for _, l := range c.live[n].lines(t) {
				if l.Msg == "became leader" {
					return n
				}
			}
		}
	}
	return names[rnd.IntN(len(names))]
}

// settled reports whether a serving replica listed the outbox with every one of n messages
// done and nothing else.
func (c *killCluster) settled(t *testing.T, n int) bool {
	t.Helper()
	for _, name := range c.names() {
		o := outboxStatus(t, "http://"+c.debugs[name]+"/debug/status", "once.js")
		if o != nil && o.Done == n && o.Pending+o.Claimed+o.Failed == 0 {
			return true
		}
	}
	return false
}

// A stream of ConfigMaps, each sending one outbox message under its own key, while replicas
// are killed with kill -9 at random moments (seeded: -outbox-kill-seed replays the schedule)
// and restarted. By the end every key was posted (none lost), and a key posted more than once
// had every later post marked interrupted: the window of docs/once.md, a claim whose outcome
// was never recorded. The receiver answers after up to 100ms, so kills land mid-delivery.
func TestOutboxRandomKillsDuringAStream(t *testing.T) {
	cp := controlplane.Require(t, env)
	seed := *outboxKillSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -outbox-kill-seed %d)", seed, seed)
	le := newLeaderEnvNamed(t, cp, fmt.Sprintf("oncekill-%d", time.Now().UnixNano()))
	for i, tc := range []struct {
		name    string
		sharded bool
		replica [2]string
	}{
		{"a leader-elected pair", false, [2]string{"a", "b"}},
		{"two --sharded replicas", true, [2]string{"x", "y"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			seed := seed + uint64(i)
			env := le.sibling(t, fmt.Sprintf("%s-%d", le.ns, i))
			rcv := startStreamReceiver(t, seed)
			src := strings.NewReplacer("NAMESPACE", env.ns, "ADDR", rcv.addr).Replace(onceScript)
			writeScript(t, env.scripts, "once.js", src)
			c := &killCluster{le: env, kube: cp.Kubeconfig, live: map[string]*replica{}, debugs: map[string]string{},
				flags: []string{"--store", "--store-namespace", env.ns, "--allow-net", "127.0.0.1", "--namespace", env.ns,
					"--outbox-lease", "3s", "--handler-timeout", "2s"}}
			if tc.sharded {
				c.se = &shardEnv{leaderEnv: env, cp: cp, replicas: map[string]*shardReplica{}}
			}
			t.Cleanup(func() { c.dumpOnFailure(t) })
			c.start(t, tc.replica[0])
			c.start(t, tc.replica[1])
			c.waitServing(t) // which of a pair leads is theirs to decide
			runKillStream(t, c, rcv, seed)
		})
	}
}

// runKillStream creates the stream, kills and restarts replicas during it, and checks what
// the receiver got. Each kill comes at a random moment after the cluster serves again (both
// replicas up), so that it lands on a replica delivering, not on one still starting; the
// stream goes on until the last kill is done (at least minObjects, at most maxObjects).
func runKillStream(t *testing.T, c *killCluster, rcv *streamReceiver, seed uint64) {
	const minObjects, maxObjects = 40, 150
	rnd := rand.New(rand.NewPCG(seed, 2))
	streamRnd := rand.New(rand.NewPCG(seed, 3)) // the stream's goroutine's own
	var (
		keys      []string
		streamErr error
		wg        sync.WaitGroup
	)
	killed := make(chan struct{}) // closed after the last kill
	ctx, cancel := context.WithCancel(t.Context())
	defer func() { cancel(); wg.Wait() }() // a failure before the end stops the stream too
	wg.Go(func() {                         // owned by runKillStream: waited for below and on its return
		cms := c.le.dyn.Resource(configmaps).Namespace(c.le.ns)
		for i := 0; i < maxObjects; i++ {
			select {
			case <-killed:
				if i >= minObjects {
					return
				}
			case <-ctx.Done():
				return
			default:
			}
			time.Sleep(time.Duration(50+streamRnd.IntN(70)) * time.Millisecond) // the stream's pace
			u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": fmt.Sprintf("once-%03d", i), "namespace": c.le.ns}}}
			created, err := cms.Create(ctx, u, metav1.CreateOptions{})
			if err != nil {
				streamErr = fmt.Errorf("create once-%03d: %w", i, err)
				return
			}
			keys = append(keys, string(created.GetUID()))
		}
	})
	begin := time.Now()
	const kills = 3 // each takes a pair a Lease's duration and more: the test stays short
	for range kills {
		c.waitServing(t)
		time.Sleep(time.Duration(200+rnd.IntN(1300)) * time.Millisecond) // the random moment itself, not a wait for a condition
		name := c.victim(t, rnd)
		t.Logf("%s: kill -9 %s, restart it", time.Since(begin).Round(time.Millisecond), name)
		kill9(t, c.live[name])
		c.start(t, name)
	}
	close(killed)
	wg.Wait()
	if streamErr != nil {
		t.Fatal(streamErr)
	}

	waitFor(t, 120*time.Second, "every key posted and the outbox settled (all done)", func() bool {
		for _, k := range keys {
			if len(rcv.postsOf(k)) == 0 {
				return false
			}
		}
		return c.settled(t, len(keys))
	})
	duplicates, outside, interrupted := 0, 0, 0
	for i, k := range keys {
		posts := rcv.postsOf(k)
		for j, marked := range posts {
			if marked {
				interrupted++
			}
			if j == 0 {
				continue
			}
			duplicates++
			if !marked {
				outside++
				t.Errorf("once-%03d (key %s): post %d of %d not marked interrupted (posts %v): a duplicate outside the window",
					i, k, j+1, len(posts), posts)
			}
		}
	}
	t.Logf("%d keys, %d kills over %s: every key posted; %d duplicate posts, %d of them outside the window (not marked interrupted); %d posts marked interrupted",
		len(keys), kills, time.Since(begin).Round(time.Second), duplicates, outside, interrupted)
}

// waitServing waits until the cluster serves with both replicas: for a pair, one leads and
// the other stands by; for --sharded, every replica has its script loaded and sees a ring
// of both.
func (c *killCluster) waitServing(t *testing.T) {
	t.Helper()
	names := c.names()
	if c.se != nil {
		c.se.waitMembers(t, names...)
		for _, n := range names {
			c.live[n].waitLog(t, "ready", "", 60*time.Second) // its script loaded
		}
		return
	}
	waitFor(t, 60*time.Second, "a leader and a standby", func() bool {
		leaders := 0
		for _, n := range names {
			started := false
			for _, l := range c.live[n].lines(t) {
				started = started || l.Msg == "standing by" || l.Msg == "became leader"
				if l.Msg == "became leader" {
					leaders++
					break
				}
			}
			if !started {
				return false
			}
		}
		return leaders == 1
	})
}

// sibling is a leaderEnv of its own namespace and scripts running le's binary.
func (le *leaderEnv) sibling(t *testing.T, ns string) *leaderEnv {
	t.Helper()
	s := &leaderEnv{bin: le.bin, scripts: filepath.Join(t.TempDir(), "scripts"), ns: ns, dyn: le.dyn}
	if err := os.Mkdir(s.scripts, 0o755); err != nil {
		t.Fatal(err)
	}
	s.create(t, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
	return s
}

// dumpOnFailure logs the outbox lines of every replica's log when t failed.
func (c *killCluster) dumpOnFailure(t *testing.T) {
	if !t.Failed() {
		return
	}
	for _, r := range c.all {
		data, _ := os.ReadFile(r.log)
		for _, l := range strings.Split(string(data), "\n") {
			if strings.Contains(l, "outbox") || strings.Contains(l, "ERROR") {
				t.Logf("%s: %s", r.name, l)
			}
		}
	}
}
