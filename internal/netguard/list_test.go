package netguard

import (
	"net/netip"
	"testing"
)

func TestParseListAndAllowsHost(t *testing.T) {
	t.Parallel()
	l, err := ParseList([]string{"hooks.slack.com, *.example.org:8443", "api.invalid:9000", "10.1.0.0/16", "127.0.0.1", "::1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		host string
		port int
		want bool
	}{
		{"hooks.slack.com", 443, true},
		{"HOOKS.slack.com.", 80, true},
		{"evil-hooks.slack.com", 443, false},
		{"a.example.org", 8443, true},
		{"a.b.example.org", 8443, true},
		{"example.org", 8443, false},
		{"a.example.org", 443, false},
		{"api.invalid", 9000, true},
		{"api.invalid", 9001, false},
		{"10.1.2.3", 80, true},
		{"10.2.0.1", 80, false},
		{"127.0.0.1", 1234, true},
		{"127.0.0.2", 1234, false},
		{"[::1]", 1, true},
		{"other.invalid", 443, false},
	} {
		if got := l.AllowsHost(tc.host, tc.port); got != tc.want {
			t.Errorf("AllowsHost(%q, %d) = %v, want %v", tc.host, tc.port, got, tc.want)
		}
	}
	if got := l.String(); got != "hooks.slack.com,*.example.org:8443,api.invalid:9000,10.1.0.0/16,127.0.0.1,::1" {
		t.Errorf("String() = %q", got)
	}
}

func TestParseListRejects(t *testing.T) {
	t.Parallel()
	for _, e := range []string{"host:0", "host:99999", "host:x", "*.", "a b"} {
		if _, err := ParseList([]string{e}); err == nil {
			t.Errorf("ParseList(%q) accepted", e)
		}
	}
	if l, err := ParseList([]string{"", " , "}); err != nil || !l.Empty() {
		t.Errorf("empty entries: %v, %v", l, err)
	}
}

func TestAllowsDial(t *testing.T) {
	t.Parallel()
	l, err := ParseList([]string{"127.0.0.1/32", "10.0.0.5:8080"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ip   string
		port int
		want bool
	}{
		{"93.184.216.34", 443, true}, // public: its name passed the name check
		{"127.0.0.1", 80, true},
		{"127.0.0.2", 80, false},
		{"::ffff:127.0.0.1", 80, true},
		{"10.0.0.5", 8080, true},
		{"10.0.0.5", 80, false},
		{"192.168.1.1", 80, false},
		{"172.16.0.1", 80, false},
		{"169.254.169.254", 80, false},
		{"fd00:ec2::254", 80, false},
		{"fe80::1", 80, false},
		{"::1", 80, false},
		{"0.0.0.0", 80, false},
		{"100.64.0.1", 80, false},
	} {
		if got := l.AllowsDial(netip.MustParseAddr(tc.ip), tc.port); got != tc.want {
			t.Errorf("AllowsDial(%s, %d) = %v, want %v", tc.ip, tc.port, got, tc.want)
		}
	}
}
