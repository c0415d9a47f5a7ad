package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jsinformer/jsinformer/engine"
)

// Removing a script's file deletes its series, including those of a file that never loaded;
// the scripts that stay keep theirs.
func TestRemovedScriptsLeaveNoSeries(t *testing.T) {
	t.Parallel()
	reg, ns := prometheus.NewRegistry(), uniqueName("forget")
	handler := fmt.Sprintf(`export default { watch: { resource: "v1/configmaps", namespace: %q }, onAdd(cm) { log.info("seen", { name: cm.metadata.name }); } };`, ns)
	r := startEngine(t, map[string]string{"gone.js": handler, "stays.js": handler, "broken.js": "export default {"}, func(c *engine.Config) {
		c.Registerer = reg
	})
	r.namespace(t, ns)
	r.create(t, configmapsGVR, configmap(ns, "c", nil, nil))
	for _, script := range []string{"gone.js", "stays.js"} {
		r.calls.waitFor(t, script+"'s call", 1, call{Script: script, Object: ns + "/c", Handler: "onAdd", Result: "ok"}.match)
	}
	for _, s := range []string{"gone.js", "stays.js", "broken.js"} {
		if len(seriesOf(t, reg, s)) == 0 {
			t.Fatalf("no series for %s before the removal", s)
		}
	}
	for _, s := range []string{"gone.js", "broken.js"} {
		if err := os.Remove(filepath.Join(r.dir, s)); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(seriesOf(t, reg, "gone.js"))+len(seriesOf(t, reg, "broken.js")) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("series left after the files were removed:\n%s\n%s",
				strings.Join(seriesOf(t, reg, "gone.js"), "\n"), strings.Join(seriesOf(t, reg, "broken.js"), "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(seriesOf(t, reg, "stays.js")) == 0 {
		t.Error("the remaining script lost its series")
	}
}

// seriesOf lists the series in reg labelled script=name, as family{labels}.
func seriesOf(t *testing.T, reg *prometheus.Registry, name string) []string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "script" && l.GetValue() == name {
					out = append(out, f.GetName()+fmt.Sprint(m.GetLabel()))
				}
			}
		}
	}
	return out
}
