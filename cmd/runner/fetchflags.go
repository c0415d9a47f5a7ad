package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/jsinformer/jsinformer/internal/netguard"
	"github.com/jsinformer/jsinformer/scripting"
)

// fetchFlags are the flags of scripts' fetch: where they may connect and the limits of a
// request (package internal/netguard).
type fetchFlags struct {
	allow  []string
	limits netguard.Limits
	c      *netguard.Client // made by check
}

func (n *fetchFlags) add(f *pflag.FlagSet) {
	f.StringSliceVar(&n.allow, "allow-net", nil, "where scripts' fetch may connect, comma-separated or repeated: HOST[:PORT], *.DOMAIN[:PORT], IP[:PORT] or CIDR; nothing by default. "+
		"A name resolving to a loopback, private, link-local or metadata address is refused unless an IP or CIDR entry covers that address")
	f.DurationVar(&n.limits.Timeout, "fetch-timeout", netguard.DefaultTimeout, "longest one fetch request may take, redirects and body included (never past the handler's deadline)")
	f.Int64Var(&n.limits.MaxResponseBody, "fetch-max-body", netguard.DefaultMaxResponseBody, "largest response body fetch reads, in bytes: text() and json() of a larger one throw, and the rest is not read")
	f.Int64Var(&n.limits.MaxRequestBody, "fetch-max-request-body", netguard.DefaultMaxRequestBody, "largest request body fetch sends, in bytes")
	f.IntVar(&n.limits.MaxConcurrent, "fetch-concurrency", netguard.DefaultMaxConcurrent, "most fetch requests in flight at once per script version; more wait for a slot")
}

// check validates the flags and makes the runner's fetch client.
func (n *fetchFlags) check() error {
	if n.limits.Timeout <= 0 || n.limits.MaxResponseBody <= 0 || n.limits.MaxRequestBody <= 0 || n.limits.MaxConcurrent <= 0 {
		return fmt.Errorf("--fetch-timeout, --fetch-max-body, --fetch-max-request-body and --fetch-concurrency must be positive")
	}
	list, err := netguard.ParseList(n.allow)
	if err != nil {
		return err
	}
	n.c = netguard.NewClient(netguard.Config{Allow: list, Limits: n.limits})
	return nil
}

// forScript is engine.Config.Fetch: a concurrency limit of its own per script version, over
// the one pooled client.
func (n *fetchFlags) forScript(string) scripting.HTTPClient { return n.c.Limited() }

// close releases the pooled connections; nil-safe before check.
func (n *fetchFlags) close() {
	if n.c != nil {
		n.c.CloseIdleConnections()
	}
}
