package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/status"
)

// moduleScript logs "hello" with the tag lib/tag.js gives, for every add in namespace ns.
func moduleScript(ns, importLine string) string {
	return importLine + "\n" + watchScript(ns,
		`  onAdd(cm) { log.info("hello", { tag: tag(cm), name: cm.metadata.name }); },`)
}

func tagModule(tag string) string {
	return fmt.Sprintf("// the shared module\nexport function tag(obj) {\n  return %q + \"/\" + obj.metadata.name;\n}\n", tag)
}

// TestSavingAModuleReloadsItsImporters runs plugins sharing modules on the real control plane:
// a module change reloads exactly the plugins importing it, directly or not; a broken module
// fails their load, positioned in the module, while the running versions keep serving; a throw
// in a module is reported where it happened.
func TestSavingAModuleReloadsItsImporters(t *testing.T) {
	t.Parallel()
	ns := uniqueName("modules")
	r := startEngine(t, map[string]string{
		"a.js":            moduleScript(ns, `import { tag } from "./lib/tag.js";`),
		"team/b.js":       moduleScript(ns, `const { tag } = require("./helpers.js");`),
		"team/helpers.js": `module.exports = require("../lib/tag.js");`,
		"c.js":            watchScript(ns, `  onAdd(cm) { log.info("plain", { name: cm.metadata.name }); },`),
		"lib/tag.js":      tagModule("v1"),
	}, nil)
	for _, module := range []string{"lib/tag.js", "team/helpers.js"} {
		if _, ok := r.engine.Status().Script(module); ok {
			t.Fatalf("module %s was loaded as a plugin", module)
		}
	}
	r.namespace(t, ns)
	r.create(t, configmapsGVR, configmap(ns, "one", nil, nil))
	// hello is what each call logs: the tag the module gave it.
	hello := func(script, tag string) func(inspection.TraceRecord) bool {
		return call{Script: script, Handler: "onAdd", Result: "ok", Logged: "hello", Attrs: map[string]string{"tag": tag}}.match
	}
	r.calls.waitFor(t, "a.js on v1", 1, hello("a.js", "v1/one"))
	r.calls.waitFor(t, "team/b.js on v1", 1, hello("team/b.js", "v1/one"))

	r.write(t, "lib/tag.js", tagModule("v2"))
	for _, script := range []string{"a.js", "team/b.js"} {
		waitLoad(t, r, script, status.LoadReloaded, "")
		r.calls.waitFor(t, script+" replays on v2", 1, hello(script, "v2/one"))
	}

	broken := "// the shared module\nexport function tag(obj) {\n  return obj.metadata.name +;\n}\n"
	r.write(t, "lib/tag.js", broken)
	for _, script := range []string{"a.js", "team/b.js"} {
		failed := waitLoad(t, r, script, status.LoadFailed, "")
		if e := failed.Error; e == nil || !strings.HasPrefix(e.Message, "lib/tag.js:3:29: ") {
			t.Errorf("%s: error = %+v, want it positioned at lib/tag.js:3:29", script, e)
		}
		if s, _ := r.engine.Status().Script(script); s.State != status.ScriptServing {
			t.Errorf("%s: no running version after the failed load: %s", script, s.State)
		}
	}
	r.create(t, configmapsGVR, configmap(ns, "two", nil, nil))
	r.calls.waitFor(t, "a.js still serves v2", 1, hello("a.js", "v2/two"))
	r.calls.waitFor(t, "team/b.js still serves v2", 1, hello("team/b.js", "v2/two"))

	r.write(t, "lib/tag.js", "export function tag(obj) {\n  if (obj.metadata.name === \"three\") throw new Error(\"no threes\");\n  return \"v3\";\n}\n")
	waitScript(t, r.engine, "a.js", "reloaded once more", func(s status.ScriptStatus) bool { return loads(s, status.LoadReloaded) == 2 })
	r.create(t, configmapsGVR, configmap(ns, "three", nil, nil))
	failed := r.log.waitFor(t, "the throw", 1, msg("script handler failed", "script", "a.js", "object", ns+"/three"))
	if e, s := failed[0].attrs["error"], failed[0].attrs["stack"]; e != "lib/tag.js:2:44: Error: no threes" ||
		!strings.HasPrefix(s, "at tag (lib/tag.js:2:44)\nat onAdd (a.js:") {
		t.Errorf("error %q, stack %q: want them in lib/tag.js", e, s)
	}

	if n := countLoads(r, "c.js", status.LoadReloaded); n > 0 {
		t.Errorf("c.js, which imports nothing, was reloaded %d times", n)
	}
	if n := countLoads(r, "c.js", status.LoadFailed); n > 0 {
		t.Errorf("c.js failed to load %d times", n)
	}
}
