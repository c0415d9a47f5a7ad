package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

func main() {
	runner := flag.String("runner", "bin/runner", "runner binary")
	scripts := flag.String("scripts", "examples/scripts", "scripts folder")
	crds := flag.String("crds", "examples/crds", "folder of CRD manifests to apply first")
	tour := flag.Bool("tour", true, "make a few changes after start-up so handlers have something to say")
	flag.Parse()
	// Stop cleanly when whoever started us (make, a shell) goes away without signalling us.
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *runner, *scripts, *crds, *tour)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, runner, scripts, crds string, tour bool) error {
	fmt.Println("demo: starting etcd and kube-apiserver v1.37.2 ...")
	cp, err := controlplane.Start(ctx, controlplane.Options{})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Println("demo: stopping the control plane")
		if err := cp.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "demo: stop control plane:", err)
		}
	}()
	kubeconfig, err := publishKubeconfig(cp.Kubeconfig)
	if err != nil {
		return err
	}
	s, err := newSeeder(cp.Config)
	if err != nil {
		return err
	}
	if err := s.seed(ctx, crds); err != nil {
		return err
	}
	fmt.Printf("\ndemo: control plane at %s\n\n    export KUBECONFIG=%s\n\n", cp.Config.Host, kubeconfig)
	debugAddr, err := freeLoopbackAddr()
	if err != nil {
		return err
	}
	fmt.Printf("demo: running %s on %s; edit the scripts and save to reload them. Ctrl-C stops everything.\n\n", runner, scripts)
	fmt.Printf("demo: the live page (scripts, informers, queues, explain, tail, indexes):\n\n    http://%s/\n\n", debugAddr)
	if tour {
		go s.tour(ctx)
	}
	return runRunner(ctx, runner, kubeconfig, scripts, debugAddr)
}

// publishKubeconfig copies the kubeconfig to .demo/kubeconfig so the printed path is stable.
func publishKubeconfig(src string) (string, error) {
	data, err := os.ReadFile(src)
	if err != nil {
		return "", fmt.Errorf("read kubeconfig: %w", err)
	}
	dst, err := filepath.Abs(filepath.Join(".demo", "kubeconfig"))
	if err != nil {
		return "", fmt.Errorf("publish kubeconfig: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", fmt.Errorf("publish kubeconfig: %w", err)
	}
	return dst, os.WriteFile(dst, data, 0o600)
}

// runRunner runs the runner in the foreground until it exits or ctx ends; then it asks the
// runner to stop and waits for it.
func runRunner(ctx context.Context, runner, kubeconfig, scripts, debugAddr string) error {
	cmd := exec.Command(runner, "--kubeconfig", kubeconfig, "--gvr", "apps/v1/deployments", "--scripts", scripts, "--debug-addr", debugAddr)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start runner: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return fmt.Errorf("runner exited: %w", err)
	case <-ctx.Done():
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		return fmt.Errorf("runner did not stop within 10s: %w", <-done)
	}
}

// freeLoopbackAddr picks a free loopback port for the runner's debug listener, so the URL the
// demo prints is the one the runner serves (the default port may belong to another runner).
func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("pick a debug port: %w", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return "", fmt.Errorf("pick a debug port: %w", err)
	}
	return addr, nil
}
