package debugtext

import (
	"strings"
	"testing"

	"github.com/jsinformer/jsinformer/inspection"
)

// A record's store calls print by key, size and version, with the value only when the record
// carries it (a readable key).
func TestRecordPrintsStoreCalls(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	Record(&b, inspection.TraceRecord{Script: "n.js", Event: "update", Handler: "onUpdate", Result: "ok", Store: []inspection.StoreOp{
		{Op: "get", Key: "secret/web", Found: true, Bytes: 42, Version: 7},
		{Op: "set", Shared: "team-a", Key: "last/web", Bytes: 4, Version: 8, Value: `"ok"`},
		{Op: "list", Key: "last/", Count: 3, Bytes: 12},
		{Op: "get", Key: "gone"},
		{Op: "set", Key: "big", Bytes: 9, Error: "store limit exceeded"},
	}}, false)
	for _, want := range []string{"store  get secret/web  42B v7\n", `store  set [team-a] last/web  4B v8 = "ok"`,
		"store  list last/ -> 3 keys  12B", "store  get gone -> absent  0B", "store  set big  9B  store limit exceeded"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("record lacks %q:\n%s", want, b.String())
		}
	}
}
