package shardrange

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/jsinformer/jsinformer/sharding"
)

// MaxPlanBytes bounds an encoded plan DecodePlan reads: a plan of MaxPlanMembers members of
// 40-byte identities takes about 45 KiB.
const MaxPlanBytes = 64 << 10

// MaxPlanMembers bounds the members of a plan DecodePlan reads.
const MaxPlanMembers = 1024

// planVersion opens an encoded plan.
const planVersion = "v1"

var planEncoding = base64.RawURLEncoding.Strict()

// Encode writes p as ASCII for a Kubernetes annotation, self-contained:
// "v1;" CUTS ";" MEMBERS ";" OWNERS, where CUTS is the layout's 255 cuts as 8-byte big-endian
// words in unpadded base64url ("" for equal slices), MEMBERS the ring's identities,
// query-escaped, joined by ",", and OWNERS each slice's owner as an index into MEMBERS, one
// byte each (two, big-endian, above 256 members), in unpadded base64url ("" for an empty
// ring). DecodePlan reads it back; a ring of more than MaxPlanMembers members or with an
// empty identity encodes to something it refuses.
func (p *Plan) Encode() string {
	var b strings.Builder
	b.WriteString(planVersion + ";")
	if !p.layout.IsZero() {
		b.WriteString(planEncoding.EncodeToString([]byte(p.layout.cuts.Value())))
	}
	b.WriteByte(';')
	for i, m := range p.ring {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(url.QueryEscape(m))
	}
	b.WriteByte(';')
	if len(p.ring) > 0 {
		wide := len(p.ring) > 256
		owners := make([]byte, 0, 2*Slices)
		for _, o := range p.owners {
			if wide {
				owners = append(owners, byte(o>>8))
			}
			owners = append(owners, byte(o))
		}
		b.WriteString(planEncoding.EncodeToString(owners))
	}
	return b.String()
}

// DecodePlan reads a plan Encode wrote. The input comes from anyone who can write a Lease:
// it is bounded (MaxPlanBytes, MaxPlanMembers) and checked (a known version, cuts strictly
// increasing, members sorted and distinct, owners in range) before anything else is done.
func DecodePlan(s string) (*Plan, error) {
	p, err := decodePlan(s)
	if err != nil {
		return nil, fmt.Errorf("decode shard plan: %w", err)
	}
	return p, nil
}

func decodePlan(s string) (*Plan, error) {
	if len(s) > MaxPlanBytes {
		return nil, fmt.Errorf("%d bytes, more than %d", len(s), MaxPlanBytes)
	}
	parts := strings.SplitN(s, ";", 5)
	if len(parts) != 4 {
		return nil, fmt.Errorf("%d fields separated by ';', want 4", len(parts))
	}
	if parts[0] != planVersion {
		return nil, fmt.Errorf("unknown version %q, want %q", truncate(parts[0]), planVersion)
	}
	layout, err := decodeCuts(parts[1])
	if err != nil {
		return nil, err
	}
	ring, err := decodeMembers(parts[2])
	if err != nil {
		return nil, err
	}
	p := &Plan{ring: ring, layout: layout}
	if p.owners, err = decodeOwners(parts[3], len(ring)); err != nil {
		return nil, err
	}
	return p, nil
}

// truncate shortens a stranger's string for an error message.
func truncate(s string) string {
	if len(s) > 16 {
		return s[:16] + "…"
	}
	return s
}

func decodeCuts(s string) (Layout, error) {
	if s == "" {
		return Layout{}, nil
	}
	b, err := planEncoding.DecodeString(s)
	if err != nil {
		return Layout{}, fmt.Errorf("read cuts: %w", err)
	}
	if len(b) != cutBytes {
		return Layout{}, fmt.Errorf("read cuts: %d bytes, want %d", len(b), cutBytes)
	}
	var cuts [Slices - 1]uint64
	prev := uint64(0)
	for i := range cuts {
		cuts[i] = word(string(b), i)
		if cuts[i] <= prev {
			return Layout{}, fmt.Errorf("read cuts: cut %d (%#x) is not above the one before (%#x)", i+1, cuts[i], prev)
		}
		prev = cuts[i]
	}
	return layoutOf(&cuts), nil
}

func decodeMembers(s string) (sharding.Ring, error) {
	if s == "" {
		return nil, nil
	}
	if n := strings.Count(s, ",") + 1; n > MaxPlanMembers {
		return nil, fmt.Errorf("read members: %d, more than %d", n, MaxPlanMembers)
	}
	var ring sharding.Ring
	for _, escaped := range strings.Split(s, ",") {
		m, err := url.QueryUnescape(escaped)
		if err != nil {
			return nil, fmt.Errorf("read members: %w", err)
		}
		if m == "" {
			return nil, errors.New("read members: an empty identity")
		}
		if len(ring) > 0 && m <= ring[len(ring)-1] {
			return nil, fmt.Errorf("read members: %q after %q, want sorted distinct identities", truncate(m), truncate(ring[len(ring)-1]))
		}
		ring = append(ring, m)
	}
	return ring, nil
}

func decodeOwners(s string, members int) ([Slices]int32, error) {
	var owners [Slices]int32
	if members == 0 {
		if s != "" {
			return owners, errors.New("read owners: owners without members")
		}
		for i := range owners {
			owners[i] = -1
		}
		return owners, nil
	}
	b, err := planEncoding.DecodeString(s)
	if err != nil {
		return owners, fmt.Errorf("read owners: %w", err)
	}
	width := 1
	if members > 256 {
		width = 2
	}
	if len(b) != width*Slices {
		return owners, fmt.Errorf("read owners: %d bytes, want %d", len(b), width*Slices)
	}
	for i := range owners {
		o := int32(b[i*width])
		if width == 2 {
			o = o<<8 | int32(b[i*2+1])
		}
		if o >= int32(members) {
			return owners, fmt.Errorf("read owners: slice %d's owner is member %d of %d", i, o, members)
		}
		owners[i] = o
	}
	return owners, nil
}
