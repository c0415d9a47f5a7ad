package controlplane

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// apiserverSetup is what every kube-apiserver of one control plane shares: the binary, etcd
// and the credentials files.
type apiserverSetup struct {
	bin, etcdURL, saKey, tokenFile string
}

// args are the flags of a kube-apiserver serving on port with its certificates in certDir.
func (s apiserverSetup) args(port int, certDir string) []string {
	return []string{
		"--etcd-servers=" + s.etcdURL,
		"--secure-port=" + strconv.Itoa(port),
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--endpoint-reconciler-type=none",
		"--cert-dir=" + certDir,
		"--authorization-mode=RBAC",
		"--token-auth-file=" + s.tokenFile,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + s.saKey,
		"--service-account-signing-key-file=" + s.saKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--disable-admission-plugins=ServiceAccount",
	}
}

// KillAPIServer kills kube-apiserver (SIGKILL, as a crash would) and waits until it has exited;
// etcd keeps running. Clients see connections refused until RestartAPIServer.
func (cp *ControlPlane) KillAPIServer() error {
	if cp.apiserver == nil || cp.apiserver.exited() {
		return nil
	}
	if err := cp.apiserver.cmd.Process.Kill(); err != nil {
		return fmt.Errorf("kill kube-apiserver: %w", err)
	}
	<-cp.apiserver.done
	return nil
}

// RestartAPIServer starts kube-apiserver again on the same port with the same flags, so
// Config keeps working, and waits until it is ready. Flags are added to its command line for
// this start only (such as --feature-gates=ShardedListAndWatch=true, for a benchmark that
// compares one etcd's objects served with a feature on and off); a later restart without
// them drops them.
func (cp *ControlPlane) RestartAPIServer(ctx context.Context, flags ...string) error {
	if err := cp.KillAPIServer(); err != nil {
		return err
	}
	cp.restarts++
	name := fmt.Sprintf("kube-apiserver-restart-%d", cp.restarts)
	var err error
	args := append(cp.setup.args(cp.port, filepath.Join(cp.Dir, "certs")), flags...)
	if cp.apiserver, err = startProcess(cp.Dir, name, cp.setup.bin, args); err != nil {
		return err
	}
	return cp.waitAPIServer(ctx, cp.apiserver, cp.Config)
}

// Extra is a second kube-apiserver on the same etcd, for writes while the main one is down.
type Extra struct {
	// Config reaches it with the same credentials as the main one.
	Config  *rest.Config
	process *process
}

// Stop stops the extra kube-apiserver, frozen or not.
func (x *Extra) Stop() error { return x.process.stop(15 * time.Second) }

// Freeze stops the extra kube-apiserver with SIGSTOP, as a hung process: its connections stay
// open and its port accepts new ones, but nothing answers. Thaw (or Stop, or the test process
// ending: Pdeathsig) undoes it; a test that freezes registers Thaw or Stop with t.Cleanup first.
func (x *Extra) Freeze() error { return x.process.signal(syscall.SIGSTOP) }

// Thaw resumes a frozen extra kube-apiserver (SIGCONT); a no-op when it is not frozen.
func (x *Extra) Thaw() error { return x.process.signal(syscall.SIGCONT) }

// Host is the extra kube-apiserver's address, host:port.
func (x *Extra) Host() string { return strings.TrimPrefix(x.Config.Host, "https://") }

// StartExtraAPIServer starts another kube-apiserver on the same etcd, with flags added to
// its command line (such as --feature-gates=WatchList=false, for a server with a feature
// off), and waits until it is ready. The caller stops it (Stop also stops it, before etcd).
func (cp *ControlPlane) StartExtraAPIServer(ctx context.Context, flags ...string) (*Extra, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	name := "kube-apiserver-" + strconv.Itoa(port)
	args := append(cp.setup.args(port, filepath.Join(cp.Dir, "certs-"+strconv.Itoa(port))), flags...)
	p, err := startProcess(cp.Dir, name, cp.setup.bin, args)
	if err != nil {
		return nil, err
	}
	x := &Extra{Config: rest.CopyConfig(cp.Config), process: p}
	x.Config.Host = loopbackURL("https", port)
	cp.extras = append(cp.extras, p)
	if err := cp.waitAPIServer(ctx, p, x.Config); err != nil {
		_ = x.Stop()
		return nil, err
	}
	return x, nil
}

// waitAPIServer polls until the kube-apiserver p, reached with cfg, is ready.
func (cp *ControlPlane) waitAPIServer(ctx context.Context, p *process, cfg *rest.Config) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("build client: %w", err)
	}
	for !cp.ready(ctx, client) {
		if p.exited() {
			return fmt.Errorf("start %s: it exited:\n%s", p.name, p.tail(30))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %s: %w\n%s", p.name, ctx.Err(), p.tail(30))
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

// APIServerPID is the process ID of the main kube-apiserver (a new one after each restart),
// for benchmarks that read its memory and CPU from /proc.
func (cp *ControlPlane) APIServerPID() int { return cp.apiserver.cmd.Process.Pid }

// EtcdPID is the process ID of etcd, for benchmarks that place it on CPUs of their choosing.
func (cp *ControlPlane) EtcdPID() int { return cp.etcd.cmd.Process.Pid }
