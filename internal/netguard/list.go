package netguard

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// FlagName is the flag the list comes from, named in every refusal.
const FlagName = "--allow-net"

// List is a parsed allow list; the zero List allows nothing. It is immutable once parsed.
type List struct {
	names []nameRule
	addrs []addrRule
}

// nameRule matches a host name exactly, or any name under suffix when wildcard.
type nameRule struct {
	name     string // lower case, without a trailing dot
	wildcard bool
	port     int // 0: any port
}

// addrRule is an explicit IP (a /32 or /128 prefix, with an optional port) or CIDR.
type addrRule struct {
	prefix netip.Prefix
	port   int
}

// ParseList parses --allow-net entries (each may itself be comma-separated); empty entries
// are skipped.
func ParseList(entries []string) (List, error) {
	var l List
	for _, e := range entries {
		for _, f := range strings.Split(e, ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			if err := l.add(f); err != nil {
				return List{}, fmt.Errorf("parse %s entry %q: %w", FlagName, f, err)
			}
		}
	}
	return l, nil
}

func (l *List) add(entry string) error {
	if p, err := netip.ParsePrefix(entry); err == nil {
		l.addrs = append(l.addrs, addrRule{prefix: p.Masked()})
		return nil
	}
	host, port, err := splitEntry(entry)
	if err != nil {
		return err
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.Unmap()
		l.addrs = append(l.addrs, addrRule{prefix: netip.PrefixFrom(ip, ip.BitLen()), port: port})
		return nil
	}
	r := nameRule{name: normalize(host), port: port}
	if rest, ok := strings.CutPrefix(r.name, "*."); ok {
		r.name, r.wildcard = rest, true
	}
	if r.name == "" || strings.ContainsAny(r.name, "*/ ") {
		return fmt.Errorf("want HOST[:PORT], *.DOMAIN[:PORT], IP[:PORT] or CIDR")
	}
	l.names = append(l.names, r)
	return nil
}

// splitEntry splits HOST[:PORT], [IPv6]:PORT and a bare IPv6 address.
func splitEntry(entry string) (string, int, error) {
	if _, err := netip.ParseAddr(entry); err == nil {
		return entry, 0, nil
	}
	host, p, err := net.SplitHostPort(entry)
	if err != nil {
		return strings.Trim(entry, "[]"), 0, nil //nolint:nilerr // no port: the whole entry is the host
	}
	port, err := strconv.Atoi(p)
	if err != nil || port <= 0 || port > 65535 {
		return "", 0, fmt.Errorf("invalid port %q", p)
	}
	return host, port, nil
}

func normalize(host string) string { return strings.TrimSuffix(strings.ToLower(host), ".") }

// Empty reports whether the list allows nothing.
func (l List) Empty() bool { return len(l.names) == 0 && len(l.addrs) == 0 }

// String lists the entries, for status and logs.
func (l List) String() string { return strings.Join(l.Entries(), ",") }

// Entries are the list's entries, normalized: names, then IPs and CIDRs.
func (l List) Entries() []string {
	var parts []string
	for _, r := range l.names {
		parts = append(parts, r.String())
	}
	for _, r := range l.addrs {
		s := r.prefix.String()
		if r.prefix.IsSingleIP() {
			s = r.prefix.Addr().String()
		}
		if r.port != 0 {
			s = net.JoinHostPort(s, strconv.Itoa(r.port))
		}
		parts = append(parts, s)
	}
	return parts
}

func (r nameRule) String() string {
	s := r.name
	if r.wildcard {
		s = "*." + s
	}
	if r.port != 0 {
		s += ":" + strconv.Itoa(r.port)
	}
	return s
}

// AllowsHost reports whether a request to host:port passes the name check: a name must match
// a name entry, an IP literal an IP or CIDR entry.
func (l List) AllowsHost(host string, port int) bool {
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return l.coversAddr(ip.Unmap(), port)
	}
	host = normalize(host)
	for _, r := range l.names {
		if r.port != 0 && r.port != port {
			continue
		}
		if (!r.wildcard && host == r.name) || (r.wildcard && strings.HasSuffix(host, "."+r.name)) {
			return true
		}
	}
	return false
}

// coversAddr reports whether an IP or CIDR entry covers ip (and port, for IP:PORT entries).
func (l List) coversAddr(ip netip.Addr, port int) bool {
	for _, r := range l.addrs {
		if r.prefix.Contains(ip) && (r.port == 0 || r.port == port) {
			return true
		}
	}
	return false
}

// AllowsDial reports whether a connection to the resolved ip:port may be made: a public
// address always (its name passed AllowsHost), a special one only when an entry covers it.
func (l List) AllowsDial(ip netip.Addr, port int) bool {
	ip = ip.Unmap()
	return !Special(ip) || l.coversAddr(ip, port)
}

var metadata = []netip.Addr{netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("fd00:ec2::254")}

// Special reports whether ip is an address no DNS answer may lead a request to unless the
// operator listed it: loopback, private, link-local, unique-local, unspecified, multicast,
// the cloud metadata addresses, and the shared (100.64.0.0/10) and benchmarking ranges.
func Special(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, m := range metadata {
		if ip == m {
			return true
		}
	}
	return !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsMulticast() ||
		ip.IsUnspecified() || cgnat.Contains(ip) || bench.Contains(ip)
}

var (
	cgnat = netip.MustParsePrefix("100.64.0.0/10")
	bench = netip.MustParsePrefix("198.18.0.0/15")
)
