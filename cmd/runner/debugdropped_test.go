package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/jsinformer/jsinformer/inspection"
)

// A key given up on after maxRetries stays visible: runner queue lists it with its last
// error, and a metric counts it.
func TestDebugDroppedKeys(t *testing.T) {
	// Not parallel: runners in one process share klog's global logger.
	metrics := freeAddr(t)
	d := startDebugEnv(t, "--metrics-addr", metrics)
	writeScript(t, d.scripts, "dropper.js", strings.ReplaceAll(`export default {
  watch: { resource: "configmaps", namespace: "NS" },
  maxRetries: 1,
  reconcile(key) { if (key.endsWith("/api")) throw new Error("cannot fix " + key); },
};`, "NS", d.ns))
	key := d.ns + "/api"
	var dropped inspection.DroppedKey
	eventually(t, "queue lists the dropped key", func() string {
		var q inspection.QueueView
		if _, err := d.run(t, "queue", "dropper.js"); err != nil {
			return err.Error() // not loaded yet
		}
		d.jsonOf(t, &q, "queue", "dropper.js")
		for _, k := range q.Scripts[0].Keys {
			if k.Key == key {
				return "still queued: " + k.Reason
			}
		}
		for _, k := range q.Scripts[0].Dropped {
			if k.Key == key {
				dropped = k
				return ""
			}
		}
		return "not dropped yet"
	})
	if !strings.Contains(dropped.LastError, "cannot fix "+key) || dropped.Attempts != 2 || dropped.Dropped.IsZero() {
		t.Fatalf("dropped key %+v: want its last error, 2 attempts and a time", dropped)
	}
	table := d.must(t, "queue", "dropper.js")
	if !strings.Contains(table, "Dropped after maxRetries") || !strings.Contains(table, "cannot fix "+key) {
		t.Fatalf("queue table lacks the dropped key:\n%s", table)
	}
	resp, err := http.Get("http://" + metrics + "/metrics") //nolint:noctx // test
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if want := `jsinformer_reconcile_keys_dropped_total{script="dropper.js"} 1`; !strings.Contains(string(body), want) {
		t.Fatalf("/metrics lacks %s", want)
	}
}
