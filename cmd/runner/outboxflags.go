package main

import (
	"time"

	"github.com/spf13/pflag"
)

// addOutboxFlags adds the flags of ctx.outbox (docs/once.md), which keeps its messages in the
// store (--store).
func addOutboxFlags(f *pflag.FlagSet, lease *time.Duration) {
	f.DurationVar(lease, "outbox-lease", 0, "how long a replica's claim on an outbox message holds before another replica takes its delivery as interrupted and, unless the script says interrupted: \"fail\", delivers it again; it must exceed a delivery (--handler-timeout) plus two store writes (default: --handler-timeout + 1s + 40s)")
}
