package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/status"
)

// receiver is the webhook of the notifier example on loopback: it answers by mode and counts
// the posts it accepted (answered 2xx) per Idempotency-Key. A post held ("hold") is answered
// never: when its runner is killed the connection closes and the post is not accepted, as a
// receiver that commits only what it answers.
type receiver struct {
	addr string

	mu       sync.Mutex
	mode     string              // "ok", "fail" (500) or "hold"
	accepted map[string]int      // by key: posts answered 200
	lastOK   time.Time           // when the latest post was accepted
	seen     map[string][]string // by key: every post's outcome, in order
	held     chan string         // the key of each post held
}

func startReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{mode: "fail", accepted: map[string]int{}, seen: map[string][]string{}, held: make(chan string, 10)}
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

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	key := req.Header.Get("Idempotency-Key")
	r.mu.Lock()
	mode := r.mode
	r.seen[key] = append(r.seen[key], mode)
	if mode == "ok" {
		r.accepted[key]++
		r.lastOK = time.Now()
	}
	r.mu.Unlock()
	switch mode {
	case "ok":
		w.WriteHeader(http.StatusOK)
	case "fail":
		w.WriteHeader(http.StatusInternalServerError)
	case "hold":
		r.held <- key
		<-req.Context().Done() // the runner's connection closed: killed
	}
}

func (r *receiver) setMode(mode string) {
	r.mu.Lock()
	r.mode = mode
	r.mu.Unlock()
}

func (r *receiver) counts(key string) (accepted int, seen []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.accepted[key], append([]string(nil), r.seen[key]...)
}

// waitFor polls cond until it holds, failing with what after within.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// failRollout creates a Deployment in ns and sets its Progressing condition to False,
// ProgressDeadlineExceeded, through the status subresource (no controller runs here); it
// returns the outbox key the example sends under.
func (le *leaderEnv) failRollout(t *testing.T, name string) string {
	t.Helper()
	d := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": le.ns},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "main", "image": "nginx"}}}},
		},
	}}
	res := le.dyn.Resource(deploymentsGVR).Namespace(le.ns)
	created, err := res.Create(t.Context(), d, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Object["status"] = map[string]any{"conditions": []any{map[string]any{
		"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
		"message":        fmt.Sprintf("ReplicaSet %q has timed out progressing.", name),
		"lastUpdateTime": time.Now().UTC().Format(time.RFC3339), "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}}
	if _, err := res.UpdateStatus(t.Context(), created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("rollout-failed/%s/%d", created.GetUID(), created.GetGeneration())
}

// webhookSecret creates the example's Secret (namespace jsinformer) pointing at url; the
// tests that use it do not run in parallel.
func (le *leaderEnv) webhookSecret(t *testing.T, url string) {
	t.Helper()
	nsRes := le.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"})
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "jsinformer"}}}
	if _, err := nsRes.Create(t.Context(), ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	secrets := le.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace("jsinformer")
	secret := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "slack-webhook", "namespace": "jsinformer"}, "stringData": map[string]any{"url": url}}}
	_, err := secrets.Create(t.Context(), secret, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) { // left by a run that was killed: the example has one name
		_ = secrets.Delete(t.Context(), "slack-webhook", metav1.DeleteOptions{})
		_, err = secrets.Create(t.Context(), secret, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	// t.Context() is done by the time cleanups run.
	t.Cleanup(func() { _ = secrets.Delete(context.Background(), "slack-webhook", metav1.DeleteOptions{}) })
}

func kill9(t *testing.T, r *replica) {
	t.Helper()
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		data, _ := os.ReadFile(r.log)
		t.Fatalf("kill -9 %s: %v; its log:\n%s", r.name, err, data)
	}
	<-r.done
}

// The notifier example on the real control plane, with two leader-elected replicas: a failed
// rollout is posted once however the runners die. A post refused (500) is retried and
// delivered once the webhook recovers, by the replica that took over after kill -9; a post
// cut short by kill -9 (never answered) is delivered again, with the same Idempotency-Key, by
// the next leader once the claim's lease ran out; restarts and initial adds send nothing again.
func TestOutboxNotifierExactlyOnceAcrossKills(t *testing.T) {
	cp := controlplane.Require(t, env)
	le := newLeaderEnvNamed(t, cp, fmt.Sprintf("outbox-%d", time.Now().UnixNano()))
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "scripts", "27-rollout-notifier-once.js"))
	if err != nil {
		t.Fatal(err)
	}
	writeScript(t, le.scripts, "notify.js", string(src))
	rcv := startReceiver(t)
	le.webhookSecret(t, "http://"+rcv.addr+"/hook")
	const lease = 6 * time.Second
	flags := []string{"--store", "--store-namespace", le.ns, "--allow-net", "127.0.0.1", "--namespace", le.ns,
		"--outbox-lease", lease.String(), "--handler-timeout", "3s"}

	a := le.start(t, "a", cp.Kubeconfig, flags...)
	a.waitLog(t, "became leader", "", 30*time.Second)
	b := le.start(t, "b", cp.Kubeconfig, flags...)
	b.waitLog(t, "standing by", "", 30*time.Second)

	first := le.failRollout(t, "web")
	t.Run("a refused post is retried by the next leader and delivered once the webhook recovers", func(t *testing.T) {
		waitFor(t, 30*time.Second, "the first post, refused", func() bool { _, seen := rcv.counts(first); return len(seen) >= 1 })
		kill9(t, a)
		rcv.setMode("ok")
		b.waitLog(t, "became leader", "", 30*time.Second)
		waitFor(t, 60*time.Second, "the retry, accepted", func() bool { n, _ := rcv.counts(first); return n == 1 })
		// The window: from the webhook's answer to the done record acknowledged (then logged).
		done := b.waitLog(t, "outbox message delivered", "", 30*time.Second)
		rcv.mu.Lock()
		window := done.Time.Sub(rcv.lastOK)
		rcv.mu.Unlock()
		t.Logf("window between the webhook's answer and the done record: %s", window)
		if window > lease/2 {
			t.Errorf("the done record took %s after the answer; the lease is %s", window, lease)
		}
	})

	top := t // c outlives the subtest that starts it
	var c *replica
	t.Run("a post cut short by kill -9 is delivered again after the lease, once", func(t *testing.T) {
		c = le.start(top, "c", cp.Kubeconfig, flags...)
		c.waitLog(t, "standing by", "", 30*time.Second)
		rcv.setMode("hold")
		second := le.failRollout(t, "api")
		select {
		case key := <-rcv.held:
			if key != second {
				t.Fatalf("held a post keyed %q; want %q", key, second)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the second failure was never posted")
		}
		rcv.setMode("ok")
		killed := time.Now()
		kill9(t, b)
		c.waitLog(t, "became leader", "", 30*time.Second)
		waitFor(t, 60*time.Second, "the interrupted post delivered again", func() bool { n, _ := rcv.counts(second); return n == 1 })
		if took := time.Since(killed); took < lease-time.Second {
			t.Errorf("delivered again %s after the kill; a claim holds %s", took, lease)
		}
		if _, seen := rcv.counts(second); strings.Join(seen, ",") != "hold,ok" {
			t.Errorf("posts of the second key: %v; want the held one, then one accepted", seen)
		}
		if n, _ := rcv.counts(first); n != 1 {
			t.Errorf("the first key was accepted %d times; want 1", n)
		}
		// Its done record written: a kill before it would fall in the stated window (the
		// message delivered again, marked interrupted), which the next subtest does not test.
		c.waitLog(t, "outbox message delivered", "", 30*time.Second)
	})

	t.Run("a restart sends nothing again: the initial adds find their keys", func(t *testing.T) {
		kill9(t, c)
		metrics, debug := freeAddr(t), freeAddr(t)
		d := le.start(t, "d", cp.Kubeconfig, append(flags, "--metrics-addr", metrics, "--debug-addr", debug)...)
		d.waitLog(t, "became leader", "", 30*time.Second)
		// The listing that follows the version's start, after its initial adds.
		waitHTTP(t, "http://"+metrics+"/metrics", `jsinformer_outbox_messages{script="notify.js",state="done"} 2`)
		waitFor(t, 30*time.Second, "runner status to show both messages done", func() bool {
			o := outboxStatus(t, "http://"+debug+"/debug/status", "notify.js")
			return o != nil && o.Done == 2 && o.Pending+o.Claimed+o.Failed == 0
		})
		if n, seen := rcv.counts(first); n != 1 || len(seen) != 2 {
			t.Errorf("first key: accepted %d, posts %v; want accepted once after one refusal", n, seen)
		}
		if got := rcv.total(); got != 4 {
			t.Errorf("%d posts in all; want 4 (refused, accepted; held, accepted)", got)
		}
	})
}

// outboxStatus reads the outbox of script's serving version from the state API at url; nil
// while there is none.
func outboxStatus(t *testing.T, url, script string) *status.OutboxStatus {
	t.Helper()
	resp, err := http.Get(url) //nolint:noctx // test poll
	if err != nil {
		return nil
	}
	defer func() { _ = resp.Body.Close() }()
	var st status.Status
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return nil
	}
	for _, s := range st.Scripts {
		if v, ok := s.Current(); ok && s.Name == script {
			return v.Outbox
		}
	}
	return nil
}

func (r *receiver) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.seen {
		n += len(s)
	}
	return n
}

// Two --sharded replicas share the notifier's outbox: each failed rollout is posted once. While
// the webhook refuses (500), both replicas deliver the keys they own; one is killed with
// kill -9, the other gains its keys and, once the webhook recovers, delivers every message,
// each accepted exactly once.
func TestOutboxShardedHandOver(t *testing.T) {
	cp := controlplane.Require(t, env)
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "scripts", "27-rollout-notifier-once.js"))
	if err != nil {
		t.Fatal(err)
	}
	se := newShardEnv(t, cp, "")
	writeScript(t, se.scripts, "shard.js", string(src)) // as it is: newShardEnv's replacing NAMESPACE would change it
	rcv := startReceiver(t)
	se.webhookSecret(t, "http://"+rcv.addr+"/hook")
	flags := []string{"--store", "--store-namespace", se.ns, "--allow-net", "127.0.0.1", "--namespace", se.ns,
		"--outbox-lease", "6s", "--handler-timeout", "3s"}
	x := se.start(t, "x", flags...)
	y := se.start(t, "y", flags...)
	se.waitMembers(t, "x", "y")
	t.Cleanup(func() {
		if t.Failed() {
			for _, r := range []*shardReplica{x, y} {
				data, _ := os.ReadFile(r.log)
				for _, l := range strings.Split(string(data), "\n") {
					if strings.Contains(l, "outbox") || strings.Contains(l, "ERROR") || strings.Contains(l, "WARN") {
						t.Logf("%s: %s", r.id, l)
					}
				}
			}
		}
	})

	var keys []string
	for i := range 6 {
		keys = append(keys, se.failRollout(t, fmt.Sprintf("app-%d", i)))
	}
	waitFor(t, 60*time.Second, "a refused post of every key", func() bool {
		for _, k := range keys {
			if _, seen := rcv.counts(k); len(seen) == 0 {
				return false
			}
		}
		return true
	})
	kill9(t, x.replica)
	rcv.setMode("ok")
	waitFor(t, 90*time.Second, "every key accepted", func() bool {
		for _, k := range keys {
			if n, _ := rcv.counts(k); n == 0 {
				return false
			}
		}
		return true
	})
	for _, k := range keys {
		if n, seen := rcv.counts(k); n != 1 {
			t.Errorf("key %s accepted %d times (posts %v); want once", k, n, seen)
		}
	}
}
