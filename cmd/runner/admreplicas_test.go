package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// failover is a loopback TCP front for several webhook servers, as a Service is for its ready
// endpoints: each connection goes to the first backend, in order from the one after the last
// used, that accepts it. Close stops it and joins every goroutine it started.
type failover struct {
	ln       net.Listener
	backends []string
	next     atomic.Int64
	conns    []atomic.Int64 // connections each backend took
	last     atomic.Int64   // the backend of the newest connection
	wg       sync.WaitGroup
	mu       sync.Mutex
	open     map[net.Conn]struct{}
}

func startFailover(t *testing.T, backends ...string) *failover {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &failover{ln: ln, backends: backends, conns: make([]atomic.Int64, len(backends)), open: map[net.Conn]struct{}{}}
	f.wg.Go(f.accept)
	t.Cleanup(f.Close)
	return f
}

func (f *failover) addr() string { return f.ln.Addr().String() }

func (f *failover) accept() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.wg.Go(func() { f.serve(c) })
	}
}

// serve pipes c to the first backend that accepts, in turn.
func (f *failover) serve(c net.Conn) {
	start := int(f.next.Add(1))
	for i := range f.backends {
		b := (start + i) % len(f.backends)
		up, err := net.DialTimeout("tcp", f.backends[b], time.Second)
		if err != nil {
			continue
		}
		f.conns[b].Add(1)
		f.last.Store(int64(b))
		f.pipe(c, up)
		return
	}
	_ = c.Close()
}

func (f *failover) track(conns ...net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.open == nil {
		return false
	}
	for _, c := range conns {
		f.open[c] = struct{}{}
	}
	return true
}

func (f *failover) pipe(a, b net.Conn) {
	if !f.track(a, b) {
		_ = a.Close()
		_ = b.Close()
		return
	}
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go cp(a, b) // joined below
	go cp(b, a) // joined below
	<-done
	_ = a.Close()
	_ = b.Close()
	<-done
	f.mu.Lock()
	delete(f.open, a)
	delete(f.open, b)
	f.mu.Unlock()
}

// Close stops accepting, closes the connections open and waits for every goroutine.
func (f *failover) Close() {
	_ = f.ln.Close()
	f.mu.Lock()
	for c := range f.open {
		_ = c.Close()
	}
	f.open = nil
	f.mu.Unlock()
	f.wg.Wait()
}

// TestTwoReplicasServeAdmission: two runners serve admission for the same script behind one
// address (as a Service's endpoints are; here a loopback front that skips a backend that
// refuses). Both register the same configurations, which therefore stay as they are; the API
// server's requests succeed, and the script still decides them, while the replica serving
// them is stopped.
func TestTwoReplicasServeAdmission(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	client := kubernetes.NewForConfigOrDie(cp.Config)
	ns, name := "adm-replicas", "jsinformer-replicas"
	admissionNamespace(t, client, ns, name) // (-count=N reuses it: the ConfigMaps' names are generated)
	dir := t.TempDir()
	src := policyScript(ns, `    if (obj.data && obj.data.bad) return { allowed: false, message: "bad data" };`, `{ failurePolicy: "Fail", timeoutSeconds: 5 }`)
	if err := os.WriteFile(filepath.Join(dir, "policy.js"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	addrs := []string{freePort(t), freePort(t)}
	front := startFailover(t, addrs...)
	url := "https://" + front.addr()
	replicas := []*admissionRunner{
		startAdmissionReplica(t, cp.Config, dir, name, addrs[0], url, 200*time.Millisecond),
		startAdmissionReplica(t, cp.Config, dir, name, addrs[1], url, 200*time.Millisecond),
	}
	cms := client.CoreV1().ConfigMaps(ns)
	var n atomic.Int64
	create := func(ctx context.Context, bad bool) error {
		n.Add(1)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "cm-"}}
		if bad {
			cm.Data = map[string]string{"bad": "1"}
		}
		_, err := cms.Create(ctx, cm, metav1.CreateOptions{})
		return err
	}
	denied := func(err error) bool { return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "bad data") }
	eventually(t, "the policy denies through the API server", func() string {
		if err := create(t.Context(), true); !denied(err) {
			return fmt.Sprint("create of a bad ConfigMap: ", err)
		}
		return ""
	})

	// Both replicas reconcile every 200 ms: the configuration is written by neither (the same
	// content) over ten rounds.
	vwc, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	watch, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Watch(t.Context(),
		metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: vwc.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	quiet := time.After(2 * time.Second)
observe:
	for {
		select {
		case ev := <-watch.ResultChan():
			t.Errorf("the two replicas rewrote their shared configuration: %s", ev.Type)
		case <-quiet:
			break observe
		}
	}
	watch.Stop()

	// Requests go on through the stop of the replica serving them: none fails, and after it
	// the other replica's script still decides.
	ctx, cancel := context.WithCancel(t.Context())
	var failed []error
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			if err := create(ctx, false); err != nil && ctx.Err() == nil {
				mu.Lock()
				failed = append(failed, err)
				mu.Unlock()
			}
		}
	})
	serving := int(front.last.Load())
	replicas[serving].stop()
	eventually(t, "the other replica serves", func() string {
		if err := create(t.Context(), true); !denied(err) {
			return fmt.Sprint("create of a bad ConfigMap: ", err)
		}
		if front.conns[1-serving].Load() == 0 {
			return "no connection reached the other replica yet"
		}
		return ""
	})
	for range 20 { // more requests after the stop, all through the other replica
		if err := create(t.Context(), true); !denied(err) {
			t.Errorf("after the stop, a bad ConfigMap: %v, want denied by the script", err)
		}
	}
	cancel()
	wg.Wait()
	for _, err := range failed {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("a request failed while a replica stopped: %v", err)
		}
	}
	t.Logf("connections per replica: %d, %d; replica %d stopped; %d creates", front.conns[0].Load(), front.conns[1].Load(), serving, n.Load())
}

// TestAStartingReplicaKeepsTheOthersEntries: a replica whose engine has not loaded its
// scripts yet registers nothing; in particular it does not delete the entries another
// replica registered (its own set of entries is still empty).
func TestAStartingReplicaKeepsTheOthersEntries(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	client := kubernetes.NewForConfigOrDie(cp.Config)
	ns, name := "adm-start", "jsinformer-start"
	admissionNamespace(t, client, ns, name)
	dir := t.TempDir()
	src := policyScript(ns, `    return;`, `{ failurePolicy: "Ignore", timeoutSeconds: 5 }`)
	if err := os.WriteFile(filepath.Join(dir, "policy.js"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	startAdmissionRunner(t, cp.Config, dir, name, freePort(t))
	configs := client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	var rv string
	eventually(t, "the first replica registers its entry", func() string {
		vwc, err := configs.Get(t.Context(), name, metav1.GetOptions{})
		if err != nil || len(vwc.Webhooks) != 1 {
			return fmt.Sprint("not yet: ", err)
		}
		rv = vwc.ResourceVersion
		return ""
	})
	watch, err := configs.Watch(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: rv})
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Stop()

	// The second replica's webhooks run; its engine has not loaded anything (not run yet).
	addr := freePort(t)
	logger := slog.New(slog.DiscardHandler)
	flags := webhookFlags{addr: addr, url: "https://" + addr, name: name}
	hooks, parts, err := flags.newWebhooks(t.Context(), cp.Config, false, logger)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Config{RESTConfig: cp.Config, ScriptsDir: dir, Logger: logger, OnAdmission: hooks.changed, OnReady: hooks.ready})
	if err != nil {
		t.Fatal(err)
	}
	hooks.start(e, parts, logger, nil)
	t.Cleanup(hooks.stop)
	// A registrar reconciles at once when it starts: a second of quiet shows it did not.
	quiet := time.After(time.Second)
	for {
		select {
		case ev := <-watch.ResultChan():
			t.Fatalf("a replica that has loaded nothing changed the configuration: %s %v", ev.Type, ev.Object)
		case <-quiet:
			return
		}
	}
}
