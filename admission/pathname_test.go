package admission

import (
	"strings"
	"testing"

	kvalidation "k8s.io/apimachinery/pkg/util/validation"
)

// TestEncodedNamesAreServicePathsAndDecode: every name a script can have, encoded, is made of
// segments a Service's path accepts (the API server refuses the whole configuration
// otherwise) and decodes to itself; a plain lowercase name reads as it is.
func TestEncodedNamesAreServicePathsAndDecode(t *testing.T) {
	t.Parallel()
	for _, name := range []string{
		"policy.js", "team-a/policy.js", "Policy.js", "a_b.js", "team A/Ünïcode ✓.ts", "b32--a.js", "x/b32--0/y",
		".hidden.js", "..", "-a-.js", "a.b.c.d.js", strings.Repeat("Long_", 120) + ".js", strings.Repeat("x", 300) + ".js",
		strings.Repeat("ab/", 30) + "c.js",
	} {
		path := EncodeName(name)
		for i, seg := range strings.Split(path, "/") {
			if msgs := kvalidation.IsDNS1123Subdomain(seg); len(msgs) > 0 {
				t.Errorf("EncodeName(%q) = %q: segment %d %q is not a DNS-1123 subdomain: %v", name, path, i, seg, msgs)
			}
		}
		if msgs := checkServicePath(Path("validate", name), nil); len(msgs) > 0 {
			t.Errorf("Path(%q): %v", name, msgs.ToAggregate())
		}
		if got, ok := DecodeName(path); !ok || got != name {
			t.Errorf("DecodeName(EncodeName(%q)) = %q, %t", name, got, ok)
		}
	}
	for name, want := range map[string]string{"team-a/policy.js": "team-a/policy.js", "a.js": "a.js", "Policy.js": "b32--a1nmoqb3f4n6kso"} {
		if got := EncodeName(name); !strings.HasPrefix(got, want) {
			t.Errorf("EncodeName(%q) = %q, want %q…", name, got, want)
		}
	}
}

// TestDecodeRefusesWhatEncodeDoesNotWrite: a path has one spelling per name, so a shared
// path cannot name a script twice under two spellings.
func TestDecodeRefusesWhatEncodeDoesNotWrite(t *testing.T) {
	t.Parallel()
	plain := EncodeName("a.js")
	for _, path := range []string{
		"b32--" + strings.TrimPrefix(EncodeName("Policy.js"), "b32--") + "x", // not base32hex's canonical form
		"b32--c4",                // base32 of "a": plain names are not encoded
		"B32--A1NMOQB3F4N6KSO",   // uppercase
		"b32--a1nmoqb3f4n6kso-c", // a continued part that never ends
		"b32--a1nt-c/a.js",       // ended by a plain segment
		"b32--zz",                // not base32hex
		"",                       // no name
		strings.ToUpper(plain),   // "A.JS" is encoded when a name
		"b32--" + "c5gg",         // "a/": a part with a slash
	} {
		if name, ok := DecodeName(path); ok {
			t.Errorf("DecodeName(%q) = %q, want refused", path, name)
		}
	}
	if _, names, ok := route("/validate-group/1/" + EncodeName("Policy.js") + "/1/b32--c4"); ok {
		t.Errorf("a shared path with a non-canonical name routes to %q", names)
	}
	if _, names, ok := route("/mutate/" + EncodeName("a_b.js")); !ok || len(names) != 1 || names[0] != "a_b.js" {
		t.Errorf("route of an encoded name: %q %t", names, ok)
	}
}
