package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Names in the store's ConfigMaps.
const (
	// DataKey is the ConfigMap data key holding a shard's document.
	DataKey = "store.json"
	// LabelScript labels a script's ConfigMaps with the script's ID (a hash of its name).
	LabelScript = "jsinformer.io/store-script"
	// AnnotationScript carries the script's name, which may not be a valid label value.
	AnnotationScript = "jsinformer.io/store-script"
	// AnnotationShared carries a shared namespace's name instead, on its ConfigMaps (shared.go).
	AnnotationShared = "jsinformer.io/store-shared"
	labelManagedBy   = "app.kubernetes.io/managed-by"
)

// entryOverhead approximates the JSON around one entry ({"v":…,"ver":…,"exp":…} and quotes),
// counted against MaxShardBytes so the document stays below the ConfigMap limit.
const entryOverhead = 64

// entry is one key's value as a shard document holds it.
type entry struct {
	Value   json.RawMessage `json:"v"`
	Version int64           `json:"ver"`
	Expires int64           `json:"exp,omitempty"` // Unix milliseconds; 0: never
	// Readable: the script marked the key readable, so its value may be shown (SetOptions).
	Readable bool `json:"r,omitempty"`
}

func (e entry) expired(now time.Time) bool { return e.Expires != 0 && now.UnixMilli() >= e.Expires }

// document is one shard's content. Seq grows by one per write applied to the shard and is the
// version the write gives its key.
type document struct {
	Seq     int64            `json:"seq"`
	Entries map[string]entry `json:"entries"`
	// At is when the shard was last written, Unix milliseconds (runner store list).
	At int64 `json:"at,omitempty"`
}

// decodeDocument reads cm's document; a nil cm (not created yet) is an empty one.
func decodeDocument(cm *corev1.ConfigMap) (*document, error) {
	doc := &document{Entries: map[string]entry{}}
	if cm == nil || cm.Data[DataKey] == "" {
		return doc, nil
	}
	if err := json.Unmarshal([]byte(cm.Data[DataKey]), doc); err != nil {
		return nil, fmt.Errorf("decode store configmap %s: %w", cm.Name, err)
	}
	if doc.Entries == nil {
		doc.Entries = map[string]entry{}
	}
	return doc, nil
}

// encodeDocument is doc as the ConfigMap named name holds it.
func encodeDocument(name string, doc *document) (string, error) {
	data, err := json.Marshal(doc)
	if err != nil {
		return "", fmt.Errorf("encode store configmap %s: %w", name, err)
	}
	return string(data), nil
}

// usage is what a shard holds: live keys and their key plus value bytes.
type usage struct{ keys, bytes int }

func (d *document) usage(now time.Time) usage {
	var u usage
	for k, e := range d.Entries {
		if !e.expired(now) {
			u.keys++
			u.bytes += len(k) + len(e.Value)
		}
	}
	return u
}

// shardBytes approximates the encoded size of the document.
func (d *document) shardBytes() int {
	n := 64
	for k, e := range d.Entries {
		n += len(k) + len(e.Value) + entryOverhead
	}
	return n
}

// scriptID is the label value naming a script's ConfigMaps: a hash of its name, which may be
// longer than a label allows or hold characters one does not.
func scriptID(script string) string {
	sum := sha256.Sum256([]byte(script))
	return hex.EncodeToString(sum[:])[:16]
}

// shardName is the name of a script's shard i: readable prefix, script ID, shard number.
func shardName(prefix, script, id string, i int) string {
	return fmt.Sprintf("jsinformer-store-%s%s-%s-%d", prefix, slug(script), id, i)
}

// slug is script lower-cased with runs of other characters than [a-z0-9] made one '-',
// at most 40 characters: only there for people reading `kubectl get configmaps`.
func slug(script string) string {
	var b strings.Builder
	dash := true
	for _, r := range strings.ToLower(script) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 40 {
			break
		}
	}
	if s := strings.Trim(b.String(), "-"); s != "" {
		return s
	}
	return "script"
}

// shardOf is the shard of key among n.
func shardOf(key string, n int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return int(h.Sum32() % uint32(n)) //nolint:gosec // n is at most 1000
}
