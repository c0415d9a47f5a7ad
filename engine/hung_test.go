package engine_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// noticeWithin is issue 19's bound for noticing a hung API server; the default HTTP/2 read-idle
// and ping timeouts (5s + 5s) are what keep it.
const noticeWithin = 15 * time.Second

// A hung kube-apiserver (SIGSTOP: its connections stay open, nothing answers) is noticed
// within 15s with the default connection health check: the WARN, the informer's health
// metric, then /readyz's answer. Alone, the runner stays not ready until it answers again;
// with a healthy kube-apiserver behind the same address (a load balancer's new connections
// going elsewhere), the runner recovers through that one while the hung one stays frozen.
func TestHungAPIServerIsNoticed(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	cases := []struct {
		name     string
		failover bool
	}{
		{"hung alone", false},
		{"healthy one behind the same address", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hung, err := cp.StartExtraAPIServer(t.Context())
			if err != nil {
				t.Fatalf("start the kube-apiserver to freeze: %v", err)
			}
			t.Cleanup(func() { _ = hung.Stop() }) // resumes it first
			sw := startSwitch(t, hung.Host())
			reg, ns := prometheus.NewRegistry(), uniqueName("hung")
			r := startEngineOn(t, cp, map[string]string{"hung.js": fmt.Sprintf(tallyScript, ns)}, func(cfg *engine.Config) {
				cfg.RESTConfig = rest.CopyConfig(cfg.RESTConfig)
				cfg.RESTConfig.Host = "https://" + sw.addr()
				cfg.UnhealthyAfter = 2 * time.Second
				cfg.Registerer = reg
			})
			r.namespace(t, ns) // writes go to the control plane's own kube-apiserver
			r.create(t, configmapsGVR, configmap(ns, "before", nil, nil))
			waitView(t, r, "before=")
			if c.failover {
				healthy, err := cp.StartExtraAPIServer(t.Context())
				if err != nil {
					t.Fatalf("start the healthy kube-apiserver: %v", err)
				}
				t.Cleanup(func() { _ = healthy.Stop() })
				sw.switchTo(healthy.Host())
			}

			t.Cleanup(func() {
				if err := hung.Thaw(); err != nil {
					t.Error(err)
				}
			})
			if err := hung.Freeze(); err != nil {
				t.Fatal(err)
			}
			frozen := time.Now()
			warn := msg("informer cannot list/watch; its scripts see no changes until it recovers", "scripts", "hung.js", "namespace", ns)
			waitUntil(t, "the WARN", frozen.Add(noticeWithin), func() bool { return len(r.log.find(warn)) > 0 }, r)
			t.Logf("noticed after %v", time.Since(frozen).Round(100*time.Millisecond))
			recovered := msg("informer recovered", "scripts", "hung.js", "namespace", ns)

			if !c.failover {
				if v := gauge(t, reg, "jsinformer_informer_healthy"); v != 0 {
					t.Errorf("jsinformer_informer_healthy = %v while hung, want 0", v)
				}
				waitUntil(t, "/readyz 503", frozen.Add(noticeWithin+5*time.Second), func() bool {
					return errors.Is(r.engine.Ready(), engine.ErrNotReady)
				}, r)
				if err := r.engine.Ready(); !strings.Contains(err.Error(), "hung.js") {
					t.Errorf("Ready() = %v; want the script named", err)
				}
				if err := hung.Thaw(); err != nil {
					t.Fatal(err)
				}
			}
			// Recovered: through the healthy one while the hung one is still frozen, or
			// through the hung one once it answers again.
			r.create(t, configmapsGVR, configmap(ns, "after", nil, nil))
			waitView(t, r, "after=")
			waitUntil(t, "the recovery INFO", time.Now().Add(30*time.Second), func() bool { return len(r.log.find(recovered)) > 0 }, r)
			waitUntil(t, "ready again", time.Now().Add(30*time.Second), func() bool { return r.engine.Ready() == nil }, r)
			t.Logf("recovered, the change seen and ready again %v after the freeze", time.Since(frozen).Round(100*time.Millisecond))
			if c.failover {
				if took := time.Since(frozen); took > 2*noticeWithin {
					t.Errorf("recovered through the healthy kube-apiserver %v after the freeze, want within %v", took, 2*noticeWithin)
				}
			}
			if v := gauge(t, reg, "jsinformer_informer_healthy"); v != 1 {
				t.Errorf("jsinformer_informer_healthy = %v after recovery, want 1", v)
			}
		})
	}
}

// waitView polls until the view hung.js logged in its last call contains want.
func waitView(t *testing.T, r *runner, want string) {
	t.Helper()
	waitUntil(t, "a view with "+want, time.Now().Add(30*time.Second), func() bool {
		return strings.Contains(r.calls.lastLogged("hung.js", "view", "view"), want)
	}, r)
}

// waitUntil polls cond until deadline, failing with what and the runner's log.
func waitUntil(t *testing.T, what string, deadline time.Time, cond func() bool, r *runner) {
	t.Helper()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s by the deadline\n%s", what, r.log.dump())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// gauge is the one series of a gauge family in reg.
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("metric %s: want one series", name)
	return 0
}
