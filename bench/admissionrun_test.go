package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/jsinformer/jsinformer/admission"
	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// startAdmissionRunner runs an engine on admissionScripts with its admission server and
// registrar, as cmd/runner wires them (the server's handler wrapped to time each request),
// until the API server calls it. The returned func stops everything and removes the
// configurations (at the benchmark's end if not before).
func startAdmissionRunner(b *testing.B, cp *controlplane.ControlPlane, client kubernetes.Interface) (*handlerTimes, func()) {
	b.Helper()
	dir := b.TempDir()
	for name, src := range admissionScripts() {
		writeScript(b, dir, name, src)
	}
	ln, lnH2 := listenLoopback(b), listenLoopback(b)
	certs := &admission.SecretCerts{Client: client, Namespace: "default", Name: "jsinformer-bench-tls", Hosts: []string{"127.0.0.1"}}
	if err := certs.Ensure(b.Context()); err != nil {
		b.Fatal(err)
	}
	// validateh2's entry is registered apart, with the URL of the HTTP/2 listener.
	reg := benchRegistrar(client, "jsinformer-bench", ln, certs)
	regH2 := benchRegistrar(client, "jsinformer-bench-h2", lnH2, certs)
	ready := make(chan struct{})
	e, err := engine.New(engine.Config{RESTConfig: cp.Config, ScriptsDir: dir, Logger: slog.New(slog.DiscardHandler), PaceGC: true,
		HandlerTimeout: 5 * time.Second, OnAdmission: func() { reg.Changed(); regH2.Changed() }, OnReady: func() { close(ready) }})
	if err != nil {
		b.Fatal(err)
	}
	isH2 := func(en admission.Entry) bool { return contenderOf(en.Script) == "validateh2" }
	reg.Entries = func() []admission.Entry { return slices.DeleteFunc(benchEntries(e.AdmissionEntries()), isH2) }
	regH2.Entries = func() []admission.Entry {
		return slices.DeleteFunc(benchEntries(e.AdmissionEntries()), func(en admission.Entry) bool { return !isH2(en) })
	}
	metrics := admission.NewMetrics(prometheus.NewRegistry())
	times := newHandlerTimes()
	times.srv = admission.NewServer(admission.Config{
		Lookup: func(name string) (admission.Script, bool) { return e.AdmissionScript(name) },
		Observe: func(o admission.Observation) {
			metrics.Observe(o)
			e.RecordAdmission(o.TraceRecord())
			times.observe(o)
		}})
	tlsConfig := &tls.Config{GetCertificate: certs.GetCertificate, MinVersion: tls.VersionTLS12}
	srv := admission.HTTPServer(times, tlsConfig, false, slog.New(slog.DiscardHandler))
	srvH2 := admission.HTTPServer(times, tlsConfig, true, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.ServeTLS(ln, "", "") })
	wg.Go(func() { _ = srvH2.ServeTLS(lnH2, "", "") })
	engineDone := make(chan error, 1)
	go func() { engineDone <- e.Run(ctx) }() // joined by stop
	wg.Go(func() { _ = reg.Run(ctx) })
	wg.Go(func() { _ = regH2.Run(ctx) })
	stop := sync.OnceFunc(func() {
		cancel()
		if err := <-engineDone; err != nil {
			b.Errorf("engine Run: %v", err)
		}
		_, _ = srv.Close(), srvH2.Close()
		wg.Wait()
		for _, name := range []string{reg.Name, regH2.Name} {
			_ = client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), name, metav1.DeleteOptions{})
			_ = client.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(context.Background(), name, metav1.DeleteOptions{})
		}
	})
	b.Cleanup(stop) // on a failure too: the configurations would outlive the runner
	select {
	case <-ready:
	case <-time.After(readyTimeout):
		b.Fatal("the engine was not ready in time")
	}
	waitMutated(b, client.CoreV1().ConfigMaps("adm-mutate"))
	return times, stop
}

// waitMutated creates ConfigMaps until the API server has mutate.js label one.
func waitMutated(b *testing.B, cms typedcorev1.ConfigMapInterface) {
	b.Helper()
	for deadline, i := time.Now().Add(time.Minute), 0; ; i++ {
		cm, err := cms.Create(b.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "warm-"}}, metav1.CreateOptions{})
		if err == nil && cm.Labels["checked"] == "yes" {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("the webhooks were not called within a minute: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func listenLoopback(b *testing.B) net.Listener {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	return ln
}

// benchRegistrar registers the configurations name, calling ln; its Entries are set by the caller.
func benchRegistrar(client kubernetes.Interface, name string, ln net.Listener, certs *admission.SecretCerts) *admission.Registrar {
	reg := &admission.Registrar{Client: client, Name: name, Target: admission.Target{URL: "https://" + ln.Addr().String()}, CABundle: certs.CABundle}
	reg.Init()
	return reg
}

// benchEntries are the registrar's entries for the engine's scripts, each watching one
// namespace's ConfigMaps (cmd/runner's admissionEntries, for these scripts).
func benchEntries(in []engine.AdmissionEntry) []admission.Entry {
	out := make([]admission.Entry, 0, len(in))
	for _, e := range in {
		entry := admission.Entry{Script: e.Script, Validate: e.Validate, Mutate: e.Mutate, Spec: e.Spec}
		for _, w := range e.Watches {
			gvr := w.Resource.GVR
			entry.Rules = append(entry.Rules, admission.Rule{Group: gvr.Group, Version: gvr.Version, Resource: gvr.Resource, Namespaced: w.Resource.Namespaced})
			entry.Namespaces = append(entry.Namespaces, w.Namespace)
		}
		out = append(out, entry)
	}
	return out
}

// clearSlice deletes the ConfigMaps of a slice and waits until the API server lists none.
func clearSlice(b *testing.B, cms typedcorev1.ConfigMapInterface) {
	b.Helper()
	if err := cms.DeleteCollection(b.Context(), metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		b.Fatalf("delete the slice's ConfigMaps: %v", err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		l, err := cms.List(b.Context(), metav1.ListOptions{Limit: 1})
		if err == nil && len(l.Items) == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("the slice's ConfigMaps were not gone within a minute (%v)", err)
		}
	}
}

// createAtRate creates ConfigMaps at admissionRate a second for d (open loop: a create is
// started every tick whatever the others do, at most 256 in flight) and returns each
// create's latency in milliseconds and how many were started. data is every ConfigMap's.
func createAtRate(b *testing.B, cms typedcorev1.ConfigMapInterface, n *atomic.Int64, d time.Duration, data map[string]string) ([]float64, int) {
	b.Helper()
	var mu sync.Mutex
	var lat []float64
	var failed []error
	var wg sync.WaitGroup
	inFlight := make(chan struct{}, 256)
	ticker := time.NewTicker(time.Second / admissionRate)
	defer ticker.Stop()
	started := 0
	for deadline := time.Now().Add(d); ; {
		now := <-ticker.C
		if now.After(deadline) {
			break
		}
		select {
		case inFlight <- struct{}{}:
		default:
			continue // more than 256 in flight: the rate achieved shows it
		}
		started++
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("cm-", n.Add(1))}, Data: data}
		wg.Go(func() {
			defer func() { <-inFlight }()
			start := time.Now()
			_, err := cms.Create(context.Background(), cm, metav1.CreateOptions{})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = append(failed, err)
				return
			}
			lat = append(lat, ms(time.Since(start)))
		})
	}
	wg.Wait()
	if len(failed) > 0 {
		b.Fatalf("%d of %d creates failed: %v", len(failed), started, errors.Join(failed[:min(3, len(failed))]...))
	}
	return lat, started
}
