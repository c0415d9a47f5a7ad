package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// Leader election, tried on real processes: kill -9, SIGTERM and a cut connection need them.
// Durations are short: lease 3s, renew deadline 2s, retry 500ms.
const (
	testLease   = 3 * time.Second
	testRenew   = 2 * time.Second
	testRetry   = 500 * time.Millisecond
	leaderSlack = 2500 * time.Millisecond // process scheduling on a loaded 2-core machine (CI runs packages in parallel)
)

func newLeaderEnv(t *testing.T, cp *controlplane.ControlPlane) *leaderEnv {
	t.Helper()
	le := newLeaderEnvNamed(t, cp, fmt.Sprintf("leader-%d", time.Now().UnixNano()))
	writeScript(t, le.scripts, "leader.js", `export default { watch: { resource: "v1/configmaps", namespace: "`+le.ns+`" },
  onAdd(cm, ctx) { log.info("handled", { name: cm.metadata.name, initial: ctx.isInInitialList }); } };`)
	return le
}

// start runs a replica with the test's short leader-election durations.
func (le *leaderEnv) start(t *testing.T, name, kubeconfig string, extra ...string) *replica {
	t.Helper()
	args := append([]string{"--leader-elect", "--leader-elect-resource-namespace", le.ns,
		"--leader-elect-lease-duration", testLease.String(), "--leader-elect-renew-deadline", testRenew.String(),
		"--leader-elect-retry-period", testRetry.String()}, extra...)
	return le.startPlain(t, name, kubeconfig, args...)
}

// handledBefore lists the names r handled before it logged "became leader".
func handledBefore(t *testing.T, r *replica) []string {
	t.Helper()
	var out []string
	for _, l := range r.lines(t) {
		if l.Msg == "became leader" {
			return out
		}
		if l.Msg == "handled" {
			out = append(out, l.Attrs.Name)
		}
	}
	return out
}

func TestLeaderElection(t *testing.T) {
	cp := controlplane.Require(t, env)
	le := newLeaderEnv(t, cp)
	a := le.start(t, "a", cp.Kubeconfig)
	a.waitLog(t, "became leader", "", 30*time.Second)
	metrics := freeAddr(t)
	b := le.start(t, "b", cp.Kubeconfig, "--metrics-addr", metrics)
	b.waitLog(t, "standing by", "", 30*time.Second)
	waitHTTP(t, "http://"+metrics+"/readyz", "ok") // a synced standby is ready
	waitHTTP(t, "http://"+metrics+"/metrics", "jsinformer_leader 0")

	t.Run("only the leader calls handlers", func(t *testing.T) {
		le.configmap(t, "x1")
		a.waitLog(t, "handled", "x1", 30*time.Second)
	})

	var c *replica
	t.Run("kill -9: the standby leads within lease duration plus retry period", func(t *testing.T) {
		killed := time.Now()
		if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		le.configmap(t, "x2") // made while nobody leads
		led := b.waitLog(t, "became leader", "", 30*time.Second)
		gap := led.Time.Sub(killed)
		t.Logf("b led %v after a was killed", gap)
		if gap > testLease+testRetry+leaderSlack {
			t.Errorf("b led %v after a was killed, want within %v", gap, testLease+testRetry)
		}
		b.waitLog(t, "handled", "x2", 30*time.Second)
		b.waitLog(t, "handled", "x1", 30*time.Second) // the replay as initial adds
		if got := handledBefore(t, b); len(got) > 0 {
			t.Errorf("b handled %v while standing by", got)
		}
		waitHTTP(t, "http://"+metrics+"/metrics", "jsinformer_leader 1")
	})

	var proxy *cutProxy
	parent := t // replicas and the proxy outlive the subtest that starts them
	t.Run("SIGTERM: the leader hands over within about 2s and exits 0", func(t *testing.T) {
		proxy = newCutProxy(parent, strings.TrimPrefix(cp.Config.Host, "https://"))
		c = le.start(parent, "c", kubeconfigWith(parent, "https://"+proxy.addr(), cp.Config.BearerToken))
		c.waitLog(t, "standing by", "", 30*time.Second)
		stopped := time.Now()
		if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		led := c.waitLog(t, "became leader", "", 30*time.Second)
		gap := led.Time.Sub(stopped)
		t.Logf("c led %v after b got SIGTERM", gap)
		if gap > 2*time.Second+leaderSlack {
			t.Errorf("c led %v after b was asked to stop, want about 2s", gap)
		}
		<-b.done
		if b.err != nil {
			t.Errorf("b exited with %v after SIGTERM, want 0", b.err)
		}
	})

	t.Run("a leader cut off from the API server stops before another can lead", func(t *testing.T) {
		d := le.start(parent, "d", cp.Kubeconfig)
		d.waitLog(t, "standing by", "", 30*time.Second)
		proxy.cut()
		stoppedLine := c.waitLog(t, "stopped leading: handler calls and writes stopped; exiting so that a new leader takes over", "", 30*time.Second)
		led := d.waitLog(t, "became leader", "", 30*time.Second)
		t.Logf("c stopped %v before d led", led.Time.Sub(stoppedLine.Time))
		if !stoppedLine.Time.Before(led.Time) {
			t.Errorf("c stopped at %v, d led at %v: two leaders at once", stoppedLine.Time, led.Time)
		}
		<-c.done
		var exit *exec.ExitError
		if !errors.As(c.err, &exit) || exit.ExitCode() == 0 {
			t.Errorf("c exited with %v after losing the lease, want a non-zero code", c.err)
		}
	})
}

// cutProxy forwards TCP to the API server until cut, then drops every connection.
type cutProxy struct {
	l     net.Listener
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{l: l}
	p.wg.Go(func() { p.accept(target) })
	t.Cleanup(func() { p.cut(); p.wg.Wait() })
	return p
}

func (p *cutProxy) addr() string { return p.l.Addr().String() }

func (p *cutProxy) accept(target string) {
	for {
		in, err := p.l.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", target)
		if err != nil {
			_ = in.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		p.wg.Go(func() { _, _ = io.Copy(out, in); _ = out.Close() })
		p.wg.Go(func() { _, _ = io.Copy(in, out); _ = in.Close() })
	}
}

// cut stops accepting and closes every connection; idempotent.
func (p *cutProxy) cut() {
	_ = p.l.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}
