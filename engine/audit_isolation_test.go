package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/engine/internal/audit"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// spinAudit's validate spins until its deadline when auditing; its handler returns at once.
const spinAudit = `export default {
  watch: { resource: "v1/configmaps", namespace: %q },
  validate(obj, ctx) { if (ctx.operation === "AUDIT") { while (true) {} } },
  admission: { audit: true, timeoutSeconds: 3 },
  onAdd(cm) {},
};
`

// TestAuditSlowScriptDoesNotDelayHandlers: while the audit of a script spins to its deadline
// (1.8s a call: 60% of timeoutSeconds 3) over the objects already there, the same script's
// handler answers each new object at once, and the spinning audit records error results.
func TestAuditSlowScriptDoesNotDelayHandlers(t *testing.T) {
	cp := controlplane.Require(t, env)
	r := startEngineOn(t, cp, map[string]string{}, func(c *engine.Config) { c.HandlerTimeout = 5 * time.Second })
	ns := r.namespace(t, "audit-slow")
	for i := range 3 {
		r.create(t, configmapsGVR, configmap(ns, fmt.Sprintf("old-%d", i), nil, nil))
	}
	r.write(t, "spin.js", fmt.Sprintf(spinAudit, ns))
	r.calls.waitFor(t, "the initial onAdd calls", 3, call{Script: "spin.js", Handler: "onAdd"}.match)
	for i := range 3 {
		name := fmt.Sprintf("probe-%d", i)
		start := time.Now()
		r.create(t, configmapsGVR, configmap(ns, name, nil, nil))
		r.calls.waitFor(t, "onAdd of "+name, 1, call{Script: "spin.js", Handler: "onAdd", Object: ns + "/" + name}.match)
		if d := time.Since(start); d > time.Second {
			t.Errorf("onAdd of %s came %v after its create, while the audit spins 1.8s a call; want under 1s", name, d)
		}
		if n := len(r.engine.AuditResults("spin.js")); n >= 3+i {
			t.Fatalf("the audit finished %d objects before probe %d: it does not overlap the handler", n, i)
		}
	}
	waitFor(t, "an error result from the spinning audit", func() bool {
		for _, res := range r.engine.AuditResults("spin.js") {
			if res.Result == audit.Error && strings.Contains(res.Message, "time") {
				return true
			}
		}
		return false
	})
}
