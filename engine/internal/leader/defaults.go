package leader

import (
	"errors"
	"fmt"
	"time"
)

// WithDefaults fills the durations c leaves zero with kube-controller-manager's (15s lease,
// 10s renew deadline, 2s retry period) and checks the Lease is named and the durations
// ordered (RetryPeriod < RenewDeadline < LeaseDuration). Sharding's Leases take the same.
func (c Config) WithDefaults() (Config, error) {
	if c.Name == "" || c.Namespace == "" || c.Identity == "" {
		return c, errors.New("configure leader election: name, namespace and identity are required")
	}
	c.LeaseDuration = orDefault(c.LeaseDuration, 15*time.Second)
	c.RenewDeadline = orDefault(c.RenewDeadline, 10*time.Second)
	c.RetryPeriod = orDefault(c.RetryPeriod, 2*time.Second)
	if c.RenewDeadline >= c.LeaseDuration || c.RetryPeriod >= c.RenewDeadline {
		return c, fmt.Errorf("configure leader election: want retry period (%s) < renew deadline (%s) < lease duration (%s)",
			c.RetryPeriod, c.RenewDeadline, c.LeaseDuration)
	}
	return c, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
