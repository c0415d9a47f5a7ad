package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ControlPlane is a running etcd and kube-apiserver pair.
type ControlPlane struct {
	// Config reaches the apiserver as a cluster admin.
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig file with the same credentials.
	Kubeconfig string
	// Dir holds data, logs and credentials; removed by Stop unless KeepDir is set.
	Dir string

	etcd, apiserver *process
	keepDir         bool
	setup           apiserverSetup // how to start another kube-apiserver
	port            int            // the main kube-apiserver's port, kept across restarts
	restarts        int            // names the log of each restart
	extras          []*process     // extra kube-apiservers, stopped with the rest
}

// Options tune Start.
type Options struct {
	// Dir, when set, is used (and kept) instead of a fresh temporary directory.
	Dir string
	// Timeout bounds the wait for readiness; default 60s.
	Timeout time.Duration
}

// Start runs etcd then kube-apiserver and returns once the apiserver is ready and the default
// namespace exists. On error nothing is left running.
func Start(ctx context.Context, opts Options) (_ *ControlPlane, err error) {
	apiserverBin, etcdBin, err := binaries()
	if err != nil {
		return nil, err
	}
	cp := &ControlPlane{Dir: opts.Dir, keepDir: opts.Dir != ""}
	if cp.Dir == "" {
		if cp.Dir, err = os.MkdirTemp("", "jsinformer-controlplane-"); err != nil {
			return nil, fmt.Errorf("create control plane dir: %w", err)
		}
	}
	defer func() {
		if err != nil {
			_ = cp.Stop()
		}
	}()
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	etcdURL, err := cp.startEtcd(etcdBin)
	if err != nil {
		return nil, err
	}
	if err := cp.startAPIServer(ctx, apiserverBin, etcdURL); err != nil {
		return nil, err
	}
	return cp, cp.waitReady(ctx)
}

func (cp *ControlPlane) startEtcd(bin string) (string, error) {
	clientPort, err := freePort()
	if err != nil {
		return "", err
	}
	peerPort, err := freePort()
	if err != nil {
		return "", err
	}
	clientURL, peerURL := loopbackURL("http", clientPort), loopbackURL("http", peerPort)
	args := []string{
		"--data-dir=" + filepath.Join(cp.Dir, "etcd"),
		"--listen-client-urls=" + clientURL, "--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=default=" + peerURL,
		"--unsafe-no-fsync", "--log-level=warn",
	}
	cp.etcd, err = startProcess(cp.Dir, "etcd", bin, args)
	return clientURL, err
}

func (cp *ControlPlane) startAPIServer(ctx context.Context, bin, etcdURL string) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	saKey, err := writeServiceAccountKey(cp.Dir)
	if err != nil {
		return err
	}
	token, tokenFile, err := writeTokenFile(cp.Dir)
	if err != nil {
		return err
	}
	cp.setup = apiserverSetup{bin: bin, etcdURL: etcdURL, saKey: saKey, tokenFile: tokenFile}
	cp.port = port
	if cp.apiserver, err = startProcess(cp.Dir, "kube-apiserver", bin, cp.setup.args(port, filepath.Join(cp.Dir, "certs"))); err != nil {
		return err
	}
	cp.Config = &rest.Config{
		Host:            loopbackURL("https", port),
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		QPS:             -1, // tests and benchmarks seed thousands of objects
	}
	cp.Kubeconfig = filepath.Join(cp.Dir, "kubeconfig")
	return writeKubeconfig(cp.Kubeconfig, cp.Config)
}

// waitReady polls /readyz, then waits for the default namespace the apiserver creates itself.
func (cp *ControlPlane) waitReady(ctx context.Context) error {
	client, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return fmt.Errorf("build client: %w", err)
	}
	for {
		if cp.etcd.exited() || cp.apiserver.exited() {
			return cp.startFailure(errors.New("a control plane process exited"))
		}
		if cp.ready(ctx, client) {
			return nil
		}
		select {
		case <-ctx.Done():
			return cp.startFailure(fmt.Errorf("wait for kube-apiserver: %w", ctx.Err()))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (cp *ControlPlane) ready(ctx context.Context, client *kubernetes.Clientset) bool {
	var code int
	client.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).StatusCode(&code)
	if code != http.StatusOK {
		return false
	}
	_, err := client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
	return err == nil
}

func (cp *ControlPlane) startFailure(err error) error {
	return fmt.Errorf("start control plane: %w\n--- etcd log ---\n%s\n--- kube-apiserver log ---\n%s",
		err, cp.etcd.tail(15), cp.apiserver.tail(30))
}

// Stop stops kube-apiserver, then etcd, and removes the directory. Safe to call twice.
func (cp *ControlPlane) Stop() error {
	var errs []error
	for _, p := range cp.extras {
		errs = append(errs, p.stop(15*time.Second))
	}
	if cp.apiserver != nil {
		errs = append(errs, cp.apiserver.stop(15*time.Second))
	}
	if cp.etcd != nil {
		errs = append(errs, cp.etcd.stop(10*time.Second))
	}
	if !cp.keepDir && cp.Dir != "" {
		errs = append(errs, os.RemoveAll(cp.Dir))
	}
	return errors.Join(errs...)
}

func writeKubeconfig(path string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["jsinformer"] = &clientcmdapi.Cluster{Server: cfg.Host, InsecureSkipTLSVerify: true}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["jsinformer"] = &clientcmdapi.Context{Cluster: "jsinformer", AuthInfo: "admin"}
	kc.CurrentContext = "jsinformer"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	return nil
}
