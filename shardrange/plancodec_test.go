package shardrange_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/jsinformer/jsinformer/sharding"
	"github.com/jsinformer/jsinformer/shardrange"
)

// TestPlanEncodeDecode: a plan read back from its encoding is the same plan, with equal
// (comparable) partitions, for layouts cut and equal, rings empty to 300 members and
// identities holding the separators.
func TestPlanEncodeDecode(t *testing.T) {
	t.Parallel()
	names := nameSets()[0].names
	var many []string
	for i := range 300 {
		many = append(many, fmt.Sprintf("runner-%04d", i))
	}
	cases := []struct {
		name  string
		ring  sharding.Ring
		names []string
	}{
		{"empty ring", nil, names},
		{"one member, no namespaces", sharding.NewRing("solo"), nil},
		{"four members", ringOf(4), names},
		{"separators in identities", sharding.NewRing("a,b", "c;d", "e%20f", "ü/ß", "g h"), names},
		{"300 members", sharding.NewRing(many...), names},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := shardrange.NewPlan(tc.ring, tc.names, nil)
			s := p.Encode()
			for _, c := range s {
				if c < ' ' || c > '~' {
					t.Fatalf("the encoding holds %q: not printable ASCII", c)
				}
			}
			a, err := shardrange.DecodePlan(s)
			if err != nil {
				t.Fatalf("DecodePlan(Encode()): %v", err)
			}
			b, _ := shardrange.DecodePlan(s)
			if !a.Equal(p) || a.Encode() != s {
				t.Fatal("the decoded plan differs from the encoded one")
			}
			for _, m := range p.Ring() {
				for _, f := range []shardrange.Field{shardrange.Namespace, shardrange.UID} {
					if a.Partition(m, f) != b.Partition(m, f) || a.Partition(m, f) != p.Partition(m, f) {
						t.Errorf("%s's %s partitions from two decodings differ", m, f.Short())
					}
				}
			}
			t.Logf("%s: %d bytes", tc.name, len(s))
		})
	}
}

// TestDecodePlanRefusesHostileInput: what a stranger could write in a Lease is refused with
// an error, never a panic, and never read beyond the bounds.
func TestDecodePlanRefusesHostileInput(t *testing.T) {
	t.Parallel()
	good := shardrange.NewPlan(ringOf(3), nameSets()[1].names, nil).Encode()
	fields := strings.Split(good, ";")
	with := func(i int, v string) string {
		f := append([]string(nil), fields...)
		f[i] = v
		return strings.Join(f, ";")
	}
	b64 := base64.RawURLEncoding.EncodeToString
	descending := make([]byte, 255*8)
	for i := range 255 {
		descending[i*8] = byte(255 - i)
	}
	zeros := make([]byte, 255*8)
	owners := func(o byte) string { return b64([]byte(strings.Repeat(string([]byte{o}), shardrange.Slices))) }
	cases := map[string]string{
		"empty":                  "",
		"too long":               good + strings.Repeat("x", shardrange.MaxPlanBytes),
		"unknown version":        with(0, "v2"),
		"too few fields":         "v1;;a",
		"too many fields":        good + ";",
		"cuts not base64":        with(1, "!!!"),
		"cuts short":             with(1, b64(make([]byte, 16))),
		"cuts descending":        with(1, b64(descending)),
		"cuts all zero":          with(1, b64(zeros)),
		"an empty member":        with(2, "m0,,m2"),
		"members unsorted":       with(2, "m2,m1,m0"),
		"members repeated":       with(2, "m0,m0,m1"),
		"member bad escape":      with(2, "m0,m1,%zz"),
		"too many members":       with(2, strings.Repeat("m,", shardrange.MaxPlanMembers)+"z"),
		"owners not base64":      with(3, "$$"),
		"owners short":           with(3, b64([]byte{0, 1, 2})),
		"owner out of range":     with(3, owners(3)),
		"owners without members": with(2, ""),
		"padded owners":          with(3, base64.URLEncoding.EncodeToString(make([]byte, shardrange.Slices+1))),
	}
	for name, s := range cases {
		p, err := shardrange.DecodePlan(s)
		if err == nil || p != nil {
			t.Errorf("%s: DecodePlan = %v, %v; want an error", name, p, err)
			continue
		}
		if !strings.HasPrefix(err.Error(), "decode shard plan: ") {
			t.Errorf("%s: error %q lacks the prefix", name, err)
		}
	}
	if _, err := shardrange.DecodePlan(with(3, owners(2))); err != nil {
		t.Errorf("owners all member 2 of 3: %v", err)
	}
}
