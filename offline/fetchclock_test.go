package offline_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/jsinformer/jsinformer/internal/memcluster"
	"github.com/jsinformer/jsinformer/internal/netguard"
	"github.com/jsinformer/jsinformer/offline"
	"github.com/jsinformer/jsinformer/scripting"
)

// heldClient is a fetch client on the harness's virtual clock, as `runner test`'s routes are:
// /hang never answers (it holds the request until its context ends), /late answers 200 three
// virtual seconds after it arrived, anything else answers 200 at once. Requests counts them.
type heldClient struct {
	h        *offline.Harness
	requests atomic.Int64
}

func (c *heldClient) Limits() netguard.Limits { return netguard.Limits{Timeout: 30 * time.Second} }

func (c *heldClient) Do(req *http.Request) (*http.Response, error) {
	c.requests.Add(1)
	ctx := req.Context()
	switch req.URL.Path {
	case "/hang":
		release := scripting.HoldRequest(ctx)
		defer release()
		<-ctx.Done()
		return nil, context.Cause(ctx)
	case "/late":
		release := scripting.HoldRequest(ctx)
		defer release()
		answered := make(chan struct{})
		t := c.h.AfterFunc(3*time.Second, func() { release(); close(answered) })
		defer t.Stop()
		select {
		case <-answered:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
	return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{}, Request: req,
		Body: io.NopCloser(strings.NewReader("ok"))}, nil
}

// A request that waits on the virtual clock no longer keeps the harness busy: Settle returns
// while it is held, and Advance ends it at its timeout (the request timeout or
// AbortSignal.timeout) or delivers its late answer, at the right virtual time and not before;
// a reconcile that failed on a timeout is retried. Once the harness is closed, with a request
// still held, no goroutine is left. Not parallel: goleak.
func TestOfflineFetchTimeoutsOnTheVirtualClock(t *testing.T) {
	type step struct {
		advance time.Duration
		want    []string // every log message so far
	}
	cases := []struct {
		name, script string
		steps        []step
	}{{
		name: "request timeout",
		script: `export default { watch: "v1/configmaps", async onAdd(o) {
			try { await fetch("http://api.invalid/hang"); log.info("result: " + "answered") }
			catch (e) { log.info("result: " + (e.message.includes("timed out after 30s (--fetch-timeout)") ? "timed out" : e.message)) } } }`,
		steps: []step{{0, nil}, {29 * time.Second, nil}, {time.Second, []string{"timed out"}}},
	}, {
		name: "AbortSignal.timeout",
		script: `export default { watch: "v1/configmaps", async onAdd(o) {
			try { await fetch("http://api.invalid/hang", { signal: AbortSignal.timeout(5000) }); log.info("result: " + "answered") }
			catch (e) { log.info("result: " + e.name) } } }`,
		steps: []step{{0, nil}, {4999 * time.Millisecond, nil}, {time.Millisecond, []string{"TimeoutError"}}},
	}, {
		name: "answered before the timeout",
		script: `export default { watch: "v1/configmaps", async onAdd(o) {
			const start = Date.now();
			try { const r = await fetch("http://api.invalid/late", { signal: AbortSignal.timeout(5000) });
				log.info("result: " + "answered " + (await r.text()) + " after " + (Date.now() - start) + "ms") }
			catch (e) { log.info("result: " + e.name) } } }`,
		steps: []step{{0, nil}, {2 * time.Second, nil}, {time.Hour, []string{"answered ok after 3000ms"}}},
	}, {
		name: "reconcile retried after a timeout",
		script: `let n = 0;
			export default { watch: "v1/configmaps", async reconcile(key) {
				await fetch(++n === 1 ? "http://api.invalid/hang" : "http://api.invalid/fast"); log.info("result: " + "reconciled") } }`,
		// The backoff of the first retry is 5ms: due 30.005s after the add.
		steps: []step{{0, nil}, {30 * time.Second, nil}, {5 * time.Millisecond, []string{"reconciled"}}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			r, client := startHeld(t, tc.script)
			defer r.Close()
			if _, err := r.cluster.Create(configmapsGVR, "default", configMap("default", "a"), memcluster.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			for i, s := range tc.steps {
				start := time.Now()
				if err := r.Advance(t.Context(), s.advance); err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("step %d: Advance(%s) took %s: want the held request to count as idle", i, s.advance, d)
				}
				if got := r.infoMessages(); strings.Join(got, "|") != strings.Join(s.want, "|") {
					t.Fatalf("step %d, after Advance(%s): logs %q, want %q", i, s.advance, got, s.want)
				}
			}
			// One more request held when the harness closes: Close ends it, and leaves nothing.
			sent := client.requests.Load()
			if _, err := r.cluster.Create(configmapsGVR, "default", configMap("default", "b"), memcluster.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := r.Advance(t.Context(), 0); err != nil {
				t.Fatal(err)
			}
			if client.requests.Load() == sent {
				t.Fatal("no request for the second object")
			}
			r.Close()
		})
	}
}

// startHeld is a harness whose fetch client is a heldClient, with a handler deadline far
// beyond the test's steps: only the virtual clock ends a held request.
func startHeld(t *testing.T, script string) (*offlineRun, *heldClient) {
	t.Helper()
	clock := clocktesting.NewFakeClock(epoch)
	cluster, err := memcluster.New(memcluster.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	client := &heldClient{}
	r := &offlineRun{cluster: cluster, log: &sink{}}
	r.Harness, err = offline.New(offline.Config{Cluster: cluster, Clock: clock, Logger: slog.New(r.log),
		HandlerTimeout: time.Minute, QuietTimeout: 20 * time.Second,
		Fetch: func(string) scripting.HTTPClient { return client }})
	if err != nil {
		t.Fatal(err)
	}
	client.h = r.Harness
	if err := r.Load(t.Context(), "script.js", []byte(script)); err != nil {
		r.Close()
		t.Fatal(err)
	}
	return r, client
}

// infoMessages are the messages the script logged, "result: " cut, in order.
func (r *offlineRun) infoMessages() []string {
	var out []string
	for _, rec := range r.log.find(func(rec record) bool { return strings.HasPrefix(rec.msg, "result: ") }) {
		out = append(out, strings.TrimPrefix(rec.msg, "result: "))
	}
	return out
}

// Two reconcile workers, each parked on a request that hangs: the harness is quiet only when
// both are, and one Advance times both out; their retries then succeed.
func TestOfflineFetchParkedOnEveryReconcileWorker(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	// Each worker has a runtime of its own: the first attempts are told apart by the time.
	r, client := startHeld(t, fmt.Sprintf(`export default { watch: "v1/configmaps", concurrency: 2, async reconcile(key) {
			await fetch(Date.now() < %d ? "http://api.invalid/hang" : "http://api.invalid/fast");
			log.info("result: reconciled " + key) } }`, epoch.Add(time.Second).UnixMilli()))
	defer r.Close()
	for _, name := range []string{"a", "b"} {
		if _, err := r.cluster.Create(configmapsGVR, "default", configMap("default", name), memcluster.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Advance(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	if n := client.requests.Load(); n != 2 {
		t.Fatalf("%d requests once quiet, want both workers' (2)", n)
	}
	if err := r.Advance(t.Context(), 30*time.Second+5*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.infoMessages(), "|"); got != "reconciled default/a|reconciled default/b" && got != "reconciled default/b|reconciled default/a" {
		t.Errorf("logs %q, want both keys reconciled on retry", got)
	}
	if n := client.requests.Load(); n != 4 {
		t.Errorf("%d requests, want 4", n)
	}
}
