package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/jsinformer/jsinformer/engine"
)

// leaderFlags are kube-controller-manager's leader election flags.
type leaderFlags struct {
	enabled, sharded, shardCache              bool
	identity                                  string
	leaseDuration, renewDeadline, retryPeriod time.Duration
	name, namespace                           string
}

func (l *leaderFlags) add(f *pflag.FlagSet) {
	f.BoolVar(&l.enabled, "leader-elect", false, "run as one of several replicas: only the holder of a Lease calls scripts and writes; the others stand by with scripts loaded and informers synced")
	f.DurationVar(&l.leaseDuration, "leader-elect-lease-duration", 15*time.Second, "how long standbys wait after the leader's last renewal before taking over")
	f.DurationVar(&l.renewDeadline, "leader-elect-renew-deadline", 10*time.Second, "how long the leader tries to renew before it stops calling scripts and exits; less than the lease duration")
	f.DurationVar(&l.retryPeriod, "leader-elect-retry-period", 2*time.Second, "how often the Lease is renewed or tried")
	f.StringVar(&l.name, "leader-elect-resource-name", "jsinformer", "name of the coordination.k8s.io/v1 Lease")
	f.StringVar(&l.namespace, "leader-elect-resource-namespace", "", "namespace of the Lease (default: the pod's namespace in a cluster, else default)")
	f.StringVar(&l.identity, "leader-elect-identity", "", "this replica's identity in its Lease; unique per process (default: the hostname and a random suffix)")
	f.BoolVar(&l.sharded, "sharded", false, "spread the work over replicas: each holds its own Lease (named from --leader-elect-resource-name, same namespace and durations) and calls handlers, reconciles and schedules only for the keys it owns; every replica caches everything unless --shard-cache (docs/sharding.md)")
	f.BoolVar(&l.shardCache, "shard-cache", false, "with --sharded: each replica lists, watches and caches only the namespaces it owns, an even share planned by the lowest replica, which lists the namespaces (the API server filters with shardSelector where it serves it, the runner otherwise), so memory per replica falls as replicas are added; "+
		`ctx.cache lookups must name one of the replica's namespaces; a script may say shard: "uid" (objects spread by uid, no lookups, no reconcile) or, to see the whole cluster, shard: "none" (docs/sharding.md)`)
}

// config is the engine's leader election or sharding configuration; both nil when neither
// is on.
func (l *leaderFlags) config() (leader, sharding *engine.LeaderElection, err error) {
	if l.shardCache && !l.sharded {
		return nil, nil, errors.New("--shard-cache partitions the caches among --sharded replicas: add --sharded, or drop --shard-cache")
	}
	if !l.enabled && !l.sharded {
		return nil, nil, nil
	}
	if l.enabled && l.sharded {
		return nil, nil, errors.New("--leader-elect and --sharded cannot be used together: with --sharded every replica works, on its share of the keys")
	}
	id := l.identity
	if id == "" {
		if id, err = identity(); err != nil {
			return nil, nil, err
		}
	}
	ns := l.namespace
	if ns == "" {
		ns = podNamespace()
	}
	cfg := &engine.LeaderElection{
		Namespace: ns, Name: l.name, Identity: id,
		LeaseDuration: l.leaseDuration, RenewDeadline: l.renewDeadline, RetryPeriod: l.retryPeriod,
	}
	if l.sharded {
		return nil, cfg, nil
	}
	return cfg, nil, nil
}

// identity is the pod name (the hostname in a cluster) and a random suffix, so a restarted
// container never mistakes its predecessor's Lease for its own.
func identity() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("read hostname for the leader identity: %w", err)
	}
	suffix := make([]byte, 4)
	if _, err := rand.Read(suffix); err != nil {
		return "", fmt.Errorf("make leader identity: %w", err)
	}
	return host + "_" + hex.EncodeToString(suffix), nil
}

// podNamespace is POD_NAMESPACE, else the service account's namespace in a cluster, else
// "default".
func podNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if data, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil {
		if ns := strings.TrimSpace(string(data)); ns != "" {
			return ns
		}
	}
	return "default"
}
