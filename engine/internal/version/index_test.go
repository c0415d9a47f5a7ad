package version

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

const indexSrc = `export default { indexers: {
  byName: (o) => o.metadata.name,
  byParity: (o) => { if (o.metadata.name.endsWith("7")) throw new Error("no 7s"); return [o.spec.n % 2 ? "odd" : "even"]; },
} }`

// TestIndexStageBatches runs the index stage over batches of several sizes (below and above
// the split across its two runtimes) and checks every event got its own object's values, and
// that a throwing index function is logged once per object, not once per event, until a
// delete clears it.
func TestIndexStageBatches(t *testing.T) {
	t.Parallel()
	for _, size := range []int{1, 31, IndexBatch} {
		t.Run(fmt.Sprintf("batch of %d", size), func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			s := indexTestStage(t, &logs)
			batch := indexTestBatch(size)
			s.batch(batch)
			s.batch(batch) // failures again: no new log lines
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
			if len(s.failed) != sevens {
				t.Errorf("%d objects marked failed, want %d", len(s.failed), sevens)
			}
			for i := range batch {
				batch[i].Kind = EventDelete
			}
			s.batch(batch)
			if len(s.failed) != 0 {
				t.Errorf("%d objects still marked failed after their deletes", len(s.failed))
			}
		})
	}
}

// TestIndexStageRun: the stage's goroutine passes every event on in order with its values,
// markers included, then closes the worker's queue once its intake is closed and drained.
func TestIndexStageRun(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	s := indexTestStage(t, &logs)
	in, out := NewQueue(), NewQueue()
	batch := indexTestBatch(300) // more than one IndexBatch
	in.PushAll(batch)
	in.Push(Event{Kind: EventSynced})
	in.Close()
	done := make(chan struct{})
	go func() { defer close(done); s.Run(in, out, nil) }()
	got := make([]Event, 0, len(batch)+1)
	for {
		ev, ok := out.Pop(nil)
		if !ok {
			break
		}
		got = append(got, ev)
	}
	<-done
	if len(got) != len(batch)+1 || got[len(got)-1].Kind != EventSynced {
		t.Fatalf("got %d events ending with %v, want %d ending with the sync marker", len(got), got[len(got)-1].Kind, len(batch)+1)
	}
	checkIndexValues(t, got[:len(batch)])
}

func indexTestStage(t *testing.T, logs *bytes.Buffer) *IndexStage {
	t.Helper()
	prog, err := scripting.Compile("ix.js", []byte(indexSrc))
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewIndexStage(prog, scripting.Options{}, []string{"byName", "byParity"}, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, ix := range s.Runtimes() {
			ix.Close()
		}
	})
	return s
}

func indexTestBatch(size int) []Event {
	batch := make([]Event, size)
	sub := &Subscription{Cache: &scriptcache.View{Resource: "v1/configmaps"}}
	for i := range batch {
		name := fmt.Sprintf("cm-%03d", i)
		obj := scripting.Object{"metadata": map[string]any{"name": name}, "spec": map[string]any{"n": int64(i)}}
		batch[i] = Event{Kind: EventAdd, Sub: sub, Key: "ns/" + name, Obj: obj}
	}
	return batch
}

// checkIndexValues checks the values of every event against its own object: byName is
// Indexers[0] and byParity Indexers[1] (sorted names).
func checkIndexValues(t *testing.T, batch []Event) {
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
