// Package netguard is the HTTP client scripts' fetch goes through: an allow list of where the
// runner may connect (--allow-net), checked on the name of every request and redirect and on
// the address actually dialled, and the limits of a request (timeout, body sizes, redirects).
//
// # The allow list
//
// ParseList reads the --allow-net entries: HOST or HOST:PORT, *.DOMAIN (any name under
// DOMAIN, not DOMAIN itself) with an optional :PORT, IP or IP:PORT, and CIDR. A request's
// host must match an entry by name (a name entry for a name, an IP or CIDR entry for an IP
// literal), then the dialer's ControlContext hook checks the address the connection is made
// to, after DNS resolution: a public address passes, while a special one (loopback,
// link-local, private, unique-local, unspecified, multicast, the cloud metadata addresses
// 169.254.169.254 and fd00:ec2::254) passes only when an IP or CIDR entry covers it. So a name
// on the list that resolves to 127.0.0.1 or 10.0.0.1 is refused unless the operator listed
// that address, and no DNS answer can point a request inside the cluster's network (DNS
// rebinding, the bypass Deno's name-only --allow-net had). A script's own declared list
// (Restrict) narrows the runner's by name; it never widens it. CheckDeclared applies that
// declaration alone, with Do's error: the offline harness (`runner test`), which has no
// --allow-net, refuses with it what the runner would refuse for the declaration.
//
// Redirects are followed up to MaxRedirects (5), each checked again by name, and dialled
// through the same hook. HTTPS_PROXY, HTTP_PROXY and NO_PROXY are honoured as Go's standard
// transport does (http.ProxyFromEnvironment): the name check still applies to the request's
// URL, but the connection goes to the proxy, which the operator configured; the proxy's
// address is exempt from the address check and resolving the name becomes the proxy's job.
//
// # Errors
//
// A refusal is a *RefusedError naming the host (never the path or query, which may carry
// credentials, such as a Slack webhook URL) and the flag. Do returns errors whose text holds
// the host only: Go's *url.Error, which quotes the whole URL, is replaced. Kind classifies an
// error for metrics: refused, timeout, dns, tls, canceled or other.
//
// # Goroutines and pooling
//
// A *Client is safe for concurrent use; its one http.Transport pools connections per host.
// Limited wraps it with a limit on requests in flight (Limits.MaxConcurrent; the engine makes
// one per script version), released when a response body is closed. ReadBody reads a body up
// to its limit and closes it, leaving the rest unread.
// It starts no goroutine of its own beyond those of net/http; CloseIdleConnections releases
// the pool.
package netguard
