package inspect

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jsinformer/jsinformer/inspection"
)

// A key given up on leaves the keys for the dropped ones, which keep the last
// inspection.DroppedKeys, newest first, with their last error.
func TestKeyBookDropped(t *testing.T) {
	t.Parallel()
	b := NewKeyBook()
	n := inspection.DroppedKeys + 10
	for i := range n {
		key := fmt.Sprintf("ns/k%d", i)
		b.Queued(key, "test")
		b.Started(key)
		b.Finished(key, errors.New("boom "+key), 3, true, 0)
	}
	if b.Has("ns/k0") {
		t.Fatal("a dropped key is still in the book's keys")
	}
	d := b.Dropped()
	if len(d) != inspection.DroppedKeys {
		t.Fatalf("%d dropped keys remembered, want %d", len(d), inspection.DroppedKeys)
	}
	newest := fmt.Sprintf("ns/k%d", n-1)
	if d[0].Key != newest || d[0].LastError != "boom "+newest || d[0].Attempts != 3 {
		t.Fatalf("newest dropped key %+v, want %s with its error", d[0], newest)
	}
	if oldest := fmt.Sprintf("ns/k%d", n-inspection.DroppedKeys); d[len(d)-1].Key != oldest {
		t.Fatalf("oldest remembered %s, want %s", d[len(d)-1].Key, oldest)
	}
}
