package coalesce_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/jsinformer/jsinformer/engine/internal/coalesce"
	"github.com/jsinformer/jsinformer/engine/internal/queue"
)

// item is a queued event as the tests see it: an add, update or delete of key in watch, or a
// marker (kind "synced", no watch).
type item struct {
	kind, watch, key string
	old, obj         string
}

type ref struct{ watch, key string }

// items is what the policy needs of an item.
type items struct{}

func (items) Object(it item) (ref, bool) { return ref{it.watch, it.key}, it.watch != "" }
func (items) Update(it item) bool        { return it.kind == "update" }
func (items) Fold(into *item, it item)   { into.obj = it.obj }

func upd(watch, key, old, obj string) item {
	return item{kind: "update", watch: watch, key: key, old: old, obj: obj}
}

func (it item) String() string {
	switch it.kind {
	case "update":
		return fmt.Sprintf("update %s %s→%s", it.key, it.old, it.obj)
	case "synced":
		return "synced"
	}
	return fmt.Sprintf("%s %s →%s", it.kind, it.key, it.obj)
}

// Coalescing, event by event, on a queue with a limit of 2: only an update whose object's last
// queued event is an update is folded, keeping the old state of the first and the new state
// of the last; adds, deletes and markers always queue.
func TestCoalescingFoldsOnlyConsecutiveUpdates(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		in     []item
		want   []string // kind key old→new of each queued event, in order
		folded float64
	}{
		{"under the limit nothing is folded",
			[]item{upd("a", "x", "1", "2"), upd("a", "x", "2", "3")},
			[]string{"update x 1→2", "update x 2→3"}, 0},
		{"past the limit updates of one object fold",
			[]item{upd("a", "y", "1", "2"), upd("a", "x", "1", "2"), upd("a", "x", "2", "3"), upd("a", "x", "3", "4")},
			[]string{"update y 1→2", "update x 1→4"}, 2},
		{"a delete between is never folded over",
			[]item{upd("a", "y", "1", "2"), upd("a", "x", "1", "2"), {kind: "delete", watch: "a", key: "x", obj: "2"}, upd("a", "x", "0", "1")},
			[]string{"update y 1→2", "update x 1→2", "delete x →2", "update x 0→1"}, 0},
		{"adds always queue",
			[]item{upd("a", "y", "1", "2"), {kind: "add", watch: "a", key: "x", obj: "1"}, {kind: "add", watch: "a", key: "z", obj: "1"}},
			[]string{"update y 1→2", "add x →1", "add z →1"}, 0},
		{"another watch's object is another object",
			[]item{upd("a", "y", "1", "2"), upd("a", "x", "1", "2"), upd("b", "x", "1", "2")},
			[]string{"update y 1→2", "update x 1→2", "update x 1→2"}, 0},
		{"markers queue",
			[]item{upd("a", "y", "1", "2"), upd("a", "x", "1", "2"), {kind: "synced"}, upd("a", "x", "2", "3")},
			[]string{"update y 1→2", "update x 1→3", "synced"}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			counter := testCounter()
			q := queue.New[item]()
			q.SetOverflow(coalesce.New(2, coalesce.Items[item, ref](items{}), slog.New(slog.DiscardHandler), counter))
			for _, it := range c.in {
				q.Push(it)
			}
			var got []string
			for q.Len() > 0 {
				it, _ := q.Pop(nil)
				got = append(got, it.String())
			}
			if strings.Join(got, "; ") != strings.Join(c.want, "; ") {
				t.Errorf("queued %q, want %q", got, c.want)
			}
			if n := testutil.ToFloat64(counter); n != c.folded {
				t.Errorf("counted %v coalesced, want %v", n, c.folded)
			}
		})
	}
}

// An episode: the first fold is a WARN an operator reads, the end (back under half the limit)
// an INFO with how many were folded; once ended, updates under the limit queue again.
func TestCoalescingEpisodeEndsUnderHalfTheLimit(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	q := queue.New[item]()
	q.SetOverflow(coalesce.New(4, coalesce.Items[item, ref](items{}), slog.New(slog.NewTextHandler(&logs, nil)), testCounter()))
	for i := range 4 {
		q.Push(upd("a", fmt.Sprint("k", i), "0", "1"))
	}
	q.Push(upd("a", "k0", "1", "2")) // at the limit: folded into k0's queued update
	q.Push(upd("a", "k1", "1", "2"))
	if q.Len() != 4 {
		t.Fatalf("queued %d, want 4 (two updates folded)", q.Len())
	}
	for range 2 {
		q.Pop(nil)
	}
	q.Push(upd("a", "k3", "1", "2")) // the episode has ended: queued, though k3 is queued
	if q.Len() != 3 {
		t.Fatalf("queued %d after the episode ended, want 3", q.Len())
	}
	out := logs.String()
	if strings.Count(out, "level=WARN msg=\"script backlog over its limit") != 1 {
		t.Errorf("want one WARN for the episode, got:\n%s", out)
	}
	if !strings.Contains(out, "level=INFO msg=\"script backlog back under its limit\" backlog=2 coalesced=2") {
		t.Errorf("want the episode's end with 2 coalesced, got:\n%s", out)
	}
}

func testCounter() prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: "test_coalesced_total", Help: "test"})
}
