package admission

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"slices"
	"time"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
)

// The caBundle of the webhook entries is the union of the CAs the replicas serve with, not
// the writer's own CA: when the shared Secret's CA changes, replicas move from the old CA to
// the new one at different moments, and a bundle holding only one of them would refuse the
// others (and two replicas writing each their own would flip it at every reconcile). Each
// writer merges: it keeps the CAs stored, adds those it wants (CABundle: the one it serves and
// one it is about to serve), and drops a CA only once a CA it wants was added after it at
// least CAGrace ago, or when the CA has expired. When each CA was added is kept in the
// configuration's annotation CAAddedAnnotation, so that every replica judges alike and the
// configuration is written once per change. A replica serves a new CA's certificate only once
// the bundle carrying it is registered (servingGate), and all of them do within the Secret's
// check interval plus DefaultSettle, well within CAGrace.

// CAAddedAnnotation records, on each webhook configuration, when each CA of its entries'
// caBundle was added: a JSON object from the CA's fingerprint to an RFC 3339 time.
const CAAddedAnnotation = "jsinformer.io/ca-added"

// DefaultCAGrace is how long a replaced CA stays in the caBundle after the one replacing it
// was added: longer than replicas take to move to the new one.
const DefaultCAGrace = 2 * time.Minute

// bundleCA is one CA of a bundle.
type bundleCA struct {
	pem      []byte
	fp       string
	added    time.Time
	notAfter time.Time
}

// parseBundle is bundle's certificates by fingerprint; blocks that are not certificates are
// left out.
func parseBundle(bundle []byte, into map[string]*bundleCA) {
	for rest := bundle; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			continue
		}
		sum := sha256.Sum256(block.Bytes)
		fp := hex.EncodeToString(sum[:16])
		if into[fp] == nil {
			into[fp] = &bundleCA{pem: pem.EncodeToMemory(block), fp: fp, notAfter: cert.NotAfter}
		}
	}
}

// bundleHas reports whether every certificate of ca is in bundle.
func bundleHas(bundle, ca []byte) bool {
	have, want := map[string]*bundleCA{}, map[string]*bundleCA{}
	parseBundle(bundle, have)
	parseBundle(ca, want)
	for fp := range want {
		if have[fp] == nil {
			return false
		}
	}
	return len(want) > 0
}

// caMerge is one merge's inputs: the bundles stored in a configuration's entries, its
// annotation, and the bundle this replica wants trusted.
type caMerge struct {
	stored     [][]byte
	annotation string
	wanted     []byte
	now        time.Time
	grace      time.Duration
}

// merge returns the bundle to write, its annotation and when the next CA is due to leave
// (zero when none is). A wanted bundle holding no certificate is written as it is, without
// annotation: there is nothing to merge.
func (m caMerge) merge() (bundle []byte, annotation string, nextDrop time.Time) {
	want := map[string]*bundleCA{}
	parseBundle(m.wanted, want)
	if len(want) == 0 {
		return m.wanted, "", time.Time{}
	}
	all := m.storedCAs()
	now := m.now.UTC().Truncate(time.Second)
	for fp, ca := range want {
		if all[fp] == nil {
			ca.added = now
			all[fp] = ca
		}
		want[fp] = all[fp] // with when it was added
	}
	kept := make([]*bundleCA, 0, len(all))
	for fp, ca := range all {
		if want[fp] != nil {
			kept = append(kept, ca)
			continue
		}
		drop := m.dropAt(ca, want)
		if !now.Before(drop) {
			continue
		}
		if nextDrop.IsZero() || drop.Before(nextDrop) {
			nextDrop = drop
		}
		kept = append(kept, ca)
	}
	return encodeBundle(kept), encodeAdded(kept), nextDrop
}

// storedCAs is the CAs of the stored entries, with when each was added (the zero time when
// the annotation does not say: a CA older than any it records).
func (m caMerge) storedCAs() map[string]*bundleCA {
	all := map[string]*bundleCA{}
	for _, b := range m.stored {
		parseBundle(b, all)
	}
	var added map[string]time.Time
	_ = json.Unmarshal([]byte(m.annotation), &added) // unreadable: every CA counts as old
	for fp, ca := range all {
		ca.added = added[fp]
	}
	return all
}

// dropAt is when ca, not wanted, leaves the bundle: its end, or CAGrace after a wanted CA
// added after it or at the same time (both added by one merge: the replica held a new CA
// when the configuration was created), whichever comes first.
func (m caMerge) dropAt(ca *bundleCA, want map[string]*bundleCA) time.Time {
	at := ca.notAfter
	for _, w := range want {
		if !w.added.Before(ca.added) && w.added.Add(m.grace).Before(at) {
			at = w.added.Add(m.grace)
		}
	}
	return at
}

// encodeBundle is the CAs in the order they were added (then by fingerprint): every replica
// writes the same bytes for the same CAs.
func encodeBundle(cas []*bundleCA) []byte {
	slices.SortFunc(cas, func(a, b *bundleCA) int {
		return cmp.Or(a.added.Compare(b.added), cmp.Compare(a.fp, b.fp))
	})
	var out bytes.Buffer
	for _, ca := range cas {
		out.Write(ca.pem)
	}
	return out.Bytes()
}

func encodeAdded(cas []*bundleCA) string {
	added := make(map[string]string, len(cas))
	for _, ca := range cas {
		added[ca.fp] = ca.added.UTC().Format(time.RFC3339)
	}
	b, _ := json.Marshal(added) // a map of strings: never fails; keys sorted
	return string(b)
}

// storedBundles is the caBundle of each stored entry.
func storedBundles(stored map[string]*admissionregv1.WebhookClientConfig) [][]byte {
	out := make([][]byte, 0, len(stored))
	for _, cfg := range stored {
		out = append(out, cfg.CABundle)
	}
	return out
}

// mergeCA sets every hook's caBundle to the merge of the stored entries' bundles with wanted,
// as of now (one reading per reconcile: a CA added to both configurations must get one added
// time in both, or a second boundary between the two writes orders their bundles apart), and
// returns the configuration's annotation. Run's goroutine only (it records when the next
// CA is due to leave, for Run to reconcile then).
func (r *Registrar) mergeCA(hooks, stored map[string]*admissionregv1.WebhookClientConfig, annotation string, wanted []byte, now time.Time) string {
	grace := r.CAGrace
	if grace <= 0 {
		grace = DefaultCAGrace
	}
	bundle, ann, next := caMerge{stored: storedBundles(stored), annotation: annotation, wanted: wanted, now: now, grace: grace}.merge()
	for _, cfg := range hooks {
		cfg.CABundle = bundle
	}
	if !next.IsZero() && (r.caDrop.IsZero() || next.Before(r.caDrop)) {
		r.caDrop = next
	}
	return ann
}
