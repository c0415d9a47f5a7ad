package admission

import (
	"encoding/base32"
	"strings"
)

// Script names in webhook paths. A Service's path must be made of DNS-1123 subdomains, or the
// API server refuses the whole configuration, and a script's name is a file path
// ("team-a/Policy.js", "a_b.js"). EncodeName writes a name as such segments, reversibly, and
// DecodeName (the server's routing) reads it back.
//
// Each slash-separated part of the name that is a lowercase DNS-1123 subdomain of at most 253
// characters, and does not start with encodedPrefix, is its own segment as it is: most names
// read in their paths as they are ("/validate/team-a/policy.js"). Any other part is written
// as its bytes in base32hex (lowercase, no padding) after encodedPrefix, in segments of at
// most chunkLen characters, each but the last ending in continued: letters and digits only,
// so every segment is valid in a Service's path and in a URL without escaping.

const (
	encodedPrefix = "b32--"
	continued     = "-c" // '-' is not in base32hex's alphabet: a chunk never ends so
	chunkLen      = 240  // + prefix + suffix within a segment's 253 characters
)

var b32 = base32.HexEncoding.WithPadding(base32.NoPadding)

// EncodeName is script's name as path segments a Service's path accepts. A name with an
// empty part ("a//b.js", which no file has) gives an empty segment, which the registrar
// refuses (checkHook).
func EncodeName(script string) string {
	parts := strings.Split(script, "/")
	for i, p := range parts {
		if !literal(p) {
			parts[i] = encodePart(p)
		}
	}
	return strings.Join(parts, "/")
}

// literal reports whether part is a segment of its own in a path.
func literal(part string) bool {
	return len(part) <= 253 && segment.MatchString(part) && !strings.HasPrefix(part, encodedPrefix)
}

func encodePart(part string) string {
	enc := strings.ToLower(b32.EncodeToString([]byte(part)))
	var b strings.Builder
	for len(enc) > chunkLen {
		b.WriteString(encodedPrefix + enc[:chunkLen] + continued + "/")
		enc = enc[chunkLen:]
	}
	b.WriteString(encodedPrefix + enc)
	return b.String()
}

// DecodeName is the script name EncodeName wrote as path, false when path is not what
// EncodeName writes for any name (one name has one path: a script is never reached twice
// through two spellings). Linear in len(path).
func DecodeName(path string) (string, bool) {
	var parts []string
	var payload strings.Builder
	for seg := range strings.SplitSeq(path, "/") {
		rest, encoded := strings.CutPrefix(seg, encodedPrefix)
		if !encoded {
			if payload.Len() > 0 {
				return "", false // a continued part ends with a plain segment
			}
			parts = append(parts, seg)
			continue
		}
		chunk, more := strings.CutSuffix(rest, continued)
		payload.WriteString(chunk)
		if more {
			continue
		}
		part, err := b32.DecodeString(strings.ToUpper(payload.String()))
		if err != nil {
			return "", false
		}
		parts = append(parts, string(part))
		payload.Reset()
	}
	name := strings.Join(parts, "/")
	return name, payload.Len() == 0 && EncodeName(name) == path
}

// decodeNames decodes each of names (DecodeName), false when one is not an encoded name.
func decodeNames(names []string) ([]string, bool) {
	out := make([]string, len(names))
	for i, n := range names {
		var ok bool
		if out[i], ok = DecodeName(n); !ok {
			return nil, false
		}
	}
	return out, true
}
