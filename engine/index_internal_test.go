package engine

import (
	"bytes"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/jsinformer/jsinformer/internal/scriptcache"
	"github.com/jsinformer/jsinformer/scripting"
)

// TestIndexStageBatches runs the index stage over batches of several sizes and checks every
// event got its own object's values, and that a throwing index function is logged once per
// object, not once per event, until a delete clears it.
func TestIndexStageBatches(t *testing.T) {
	t.Parallel()
	const src = `export default { indexers: {
  byName: (o) => o.metadata.name,
  byParity: (o) => { if (o.metadata.name.endsWith("7")) throw new Error("no 7s"); return [o.spec.n % 2 ? "odd" : "even"]; },
} }`
	for _, size := range []int{1, 31, indexBatch} {
		t.Run(fmt.Sprintf("batch of %d", size), func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			v := indexTestVersion(t, src, &logs)
			batch := make([]event, size)
			sub := &subscription{Cache: &scriptcache.View{Resource: "v1/configmaps"}}
			for i := range batch {
				name := fmt.Sprintf("cm-%03d", i)
				obj := scripting.Object{"metadata": map[string]any{"name": name}, "spec": map[string]any{"n": int64(i)}}
				batch[i] = event{Kind: eventAdd, Sub: sub, Key: "ns/" + name, Obj: obj}
			}
			v.indexBatch(batch)
			v.indexBatch(batch) // failures again: no new log lines
			checkIndexValues(t, batch)
			sevens := 0
			for i := range size {
				if strings.HasSuffix(fmt.Sprint(i), "7") {
					sevens++
				}
			}
			if got := strings.Count(logs.String(), "no 7s"); got != sevens {
				t.Errorf("logged %d index failures, want %d (one per failing object)\n%s", got, sevens, logs.String())
			}
			if len(v.indexFailed) != sevens {
				t.Errorf("%d objects marked failed, want %d", len(v.indexFailed), sevens)
			}
			for i := range batch {
				batch[i].Kind = eventDelete
			}
			v.indexBatch(batch)
			if len(v.indexFailed) != 0 {
				t.Errorf("%d objects still marked failed after their deletes", len(v.indexFailed))
			}
		})
	}
}

func indexTestVersion(t *testing.T, src string, logs *bytes.Buffer) *version {
	t.Helper()
	prog, err := scripting.Compile("ix.js", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	v := &version{logger: slog.New(slog.NewTextHandler(logs, nil)), indexFailed: map[scriptcache.Key]bool{}}
	if v.indexer, err = prog.Instantiate(scripting.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.indexer.Interrupt)
	v.def = v.indexer.Definition()
	return v
}

// checkIndexValues checks the values of every event against its own object: byName is
// Indexers[0] and byParity Indexers[1] (sorted names).
func checkIndexValues(t *testing.T, batch []event) {
	t.Helper()
	for i, ev := range batch {
		name := fmt.Sprintf("cm-%03d", i)
		parity := []string{"even"}
		if i%2 == 1 {
			parity = []string{"odd"}
		}
		if strings.HasSuffix(name, "7") {
			parity = nil
		}
		if len(ev.Values) != 2 || !slices.Equal(ev.Values[0], []string{name}) || !slices.Equal(ev.Values[1], parity) {
			t.Fatalf("event %d (%s) values = %v, want [[%s] %v]", i, name, ev.Values, name, parity)
		}
	}
}
