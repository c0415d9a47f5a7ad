package status

import "time"

// OutboxStatus is a script's outbox (docs/once.md) as a serving version last listed it:
// its messages by state and the latest failed ones.
type OutboxStatus struct {
	Pending  int             `json:"pending"`
	Claimed  int             `json:"claimed"`
	Done     int             `json:"done"`
	Failed   int             `json:"failed"`
	Listed   time.Time       `json:"listed"`
	Failures []OutboxFailure `json:"failures,omitempty"`
}

// OutboxFailure is a message given up: its key, the deliveries tried and the last error.
type OutboxFailure struct {
	Key      string    `json:"key"`
	Attempts int       `json:"attempts"`
	Error    string    `json:"error"`
	Time     time.Time `json:"time"`
}
