package admission

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	admissionregv1 "k8s.io/api/admissionregistration/v1"

	"github.com/jsinformer/jsinformer/scripting"
)

// Shared entries: the API server makes one HTTPS call per webhook entry, so scripts whose
// entries would be identical but for their name and path share one entry whose path names
// them all, and the server fans the request out to them in process (fanout.go).

// Path prefixes of a webhook entry shared by several scripts.
const (
	ValidateGroupPrefix = "/validate-group/"
	MutateGroupPrefix   = "/mutate-group/"
)

// Group is the scripts sharing one webhook entry of a kind: Scripts in the order the server
// calls them (sorted by name), Entry the first one's, which the shared entry is derived from.
type Group struct {
	Kind    string // "validate" or "mutate"
	Scripts []string
	Entry   Entry
}

// Groups groups the entries that define kind into webhook entries: the entries whose webhooks
// would be identical but for their name and path share one, unless a script's name cannot be
// put in a shared path (GroupPath). The scripts of a group are sorted by name and the groups
// are in the order of their first scripts, whatever the order of entries, so the same
// entries always give the same configuration.
func Groups(entries []Entry, kind string) []Group {
	var out []Group
	at := map[string]int{} // the key of a shareable entry -> its group in out
	sorted := slices.SortedFunc(slices.Values(entries), func(a, b Entry) int { return strings.Compare(a.Script, b.Script) })
	for _, e := range sorted {
		if !e.defines(kind) {
			continue
		}
		key, shareable := shareKey(e, kind)
		if i, ok := at[key]; ok && shareable {
			out[i].Scripts = append(out[i].Scripts, e.Script)
			continue
		}
		if shareable {
			at[key] = len(out)
		}
		out = append(out, Group{Kind: kind, Scripts: []string{e.Script}, Entry: e})
	}
	return out
}

func (e Entry) defines(kind string) bool {
	return (kind == "validate" && e.Validate) || (kind == "mutate" && e.Mutate)
}

// shareKey is what e's webhook entry of kind holds besides its name and client config (the
// same Registrar settings apply to every entry), false when e's script cannot share an entry.
func shareKey(e Entry, kind string) (string, bool) {
	if !groupable(e.Script) {
		return "", false
	}
	var hook any
	var r Registrar
	alone := Group{Kind: kind, Scripts: []string{e.Script}, Entry: e}
	if kind == "validate" {
		h := r.common(alone, nil).validating()
		h.Name, h.ClientConfig = "", admissionregv1.WebhookClientConfig{}
		hook = h
	} else {
		h := r.common(alone, nil).mutating()
		h.Name, h.ClientConfig = "", admissionregv1.WebhookClientConfig{}
		hook = h
	}
	b, err := json.Marshal(hook)
	return string(b), err == nil
}

// segment is a path segment a path carries as it is (pathname.go): a DNS-1123 subdomain,
// valid in a Service's path too, and never "." or "..", which a client may clean away.
var segment = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// groupable reports whether script's name can be put in a shared path: each segment of its
// encoded name (EncodeName) is one, which fails only for a name with an empty part.
func groupable(script string) bool {
	for seg := range strings.SplitSeq(EncodeName(script), "/") {
		if len(seg) > 253 || !segment.MatchString(seg) {
			return false
		}
	}
	return true
}

// Path is the server's path for g's entry: Path of its script when it is alone, else
// GroupPath of its scripts with their failure policy.
func (g Group) Path() string {
	if len(g.Scripts) == 1 {
		return Path(g.Kind, g.Scripts[0])
	}
	return GroupPath(g.Kind, g.Entry.Spec.FailurePolicy, g.Scripts)
}

// GroupPath is the path of an entry shared by scripts (each of them groupable) whose
// failure policy is failurePolicy: the kind's group prefix, the policy in lowercase, then for
// each script the number of segments of its encoded name (EncodeName) followed by them,
// "/validate-group/fail/2/team-a/policy.js/1/b.js". Counting the parts keeps the path
// unambiguous while names contain "/", with nothing to escape and no query string. The
// policy is what a replica on which one of the scripts is not loaded answers for it
// (groupPolicy): the entry's, as registered, whichever replica registered it.
func GroupPath(kind, failurePolicy string, scripts []string) string {
	var b strings.Builder
	if kind == "mutate" {
		b.WriteString(MutateGroupPrefix)
	} else {
		b.WriteString(ValidateGroupPrefix)
	}
	if p := strings.ToLower(failurePolicy); slices.Contains(policySegments, p) {
		b.WriteString(p)
		b.WriteByte('/')
	}
	for i, s := range scripts {
		if i > 0 {
			b.WriteByte('/')
		}
		enc := EncodeName(s)
		b.WriteString(strconv.Itoa(strings.Count(enc, "/") + 1))
		b.WriteByte('/')
		b.WriteString(enc)
	}
	return b.String()
}

// policySegments are the failure policies as a GroupPath writes them.
var policySegments = []string{"fail", "ignore"}

// cutPolicy splits the failure policy segment off the rest of a GroupPath after its prefix:
// scripting.FailurePolicyFail or FailurePolicyIgnore, "" when rest starts with none (a path
// registered before paths carried it).
func cutPolicy(rest string) (policy, names string) {
	first, after, _ := strings.Cut(rest, "/")
	switch first {
	case "fail":
		return scripting.FailurePolicyFail, after
	case "ignore":
		return scripting.FailurePolicyIgnore, after
	}
	return "", rest
}

// groupPolicy is the failure policy a GroupPath carries, "" for any other path.
func groupPolicy(path string) string {
	for _, prefix := range []string{ValidateGroupPrefix, MutateGroupPrefix} {
		if rest, ok := strings.CutPrefix(path, prefix); ok {
			policy, _ := cutPolicy(rest)
			return policy
		}
	}
	return ""
}

// MaxGroupScripts bounds the scripts a shared path names; a longer path is refused.
const MaxGroupScripts = 256

// parseGroup reads the encoded names (EncodeName) of the scripts of a GroupPath after its prefix (and its failure policy
// segment); false when rest is not one or names more than MaxGroupScripts. A script named
// twice is called once. Linear in rest: the names seen are a set, and the parts are walked once.
func parseGroup(rest string) ([]string, bool) {
	_, rest = cutPolicy(rest)
	var names []string
	seen := map[string]bool{}
	for rest != "" {
		count, after, found := strings.Cut(rest, "/")
		n, err := strconv.Atoi(count)
		if !found || err != nil || n < 1 || len(names) == MaxGroupScripts {
			return nil, false
		}
		name, next, ok := cutParts(after, n)
		if !ok {
			return nil, false
		}
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
		rest = next
	}
	return names, len(names) > 0
}

// cutParts cuts the first n slash-separated parts off s: them joined, and what follows the
// slash after them; false when s has fewer than n parts.
func cutParts(s string, n int) (parts, rest string, ok bool) {
	end := 0
	for i := range n {
		j := strings.IndexByte(s[end:], '/')
		if j < 0 {
			if i < n-1 {
				return "", "", false
			}
			return s, "", true
		}
		end += j + 1
	}
	if end == len(s) { // a trailing slash: no group follows it
		return "", "", false
	}
	return s[:end-1], s[end:], true
}

// Name is g's entry name: WebhookName of its script when it is alone; else the first
// script's slug, how many others share the entry and a hash of all their names, so that
// another set of scripts gets another name.
func (g Group) Name() string {
	if len(g.Scripts) == 1 {
		return WebhookName(g.Scripts[0], g.Kind)
	}
	sum := sha256.Sum256([]byte(strings.Join(g.Scripts, "\n")))
	rest := fmt.Sprintf("and-%d-%s", len(g.Scripts)-1, hex.EncodeToString(sum[:])[:8])
	return fmt.Sprintf("%s.%s.jsinformer.io", slugged(g.Scripts[0], rest), g.Kind)
}
