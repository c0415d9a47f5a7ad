package engine_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// Run returns within the handler timeout and a short grace, even with calls in flight that
// would run for ever, and leaves no goroutine of its own behind. Not parallel: goroutines of
// other tests would blur the count.
func TestRunStopsInBoundedTimeWithoutLeaks(t *testing.T) {
	cp := controlplane.Require(t, env)
	ignore := goleak.IgnoreCurrent()
	dir := t.TempDir()
	ns := uniqueName("shutdown")
	client := admin(t)
	mustCreate(t, client, namespacesGVR, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
	mustCreate(t, client, configmapsGVR, configmap(ns, "c", nil, nil))
	scripts := map[string]string{
		"spin.js": watchScript(ns, `  onAdd() { log.info("spinning"); while (true) {} },`),
		"reconcile.js": `export default { watch: { resource: "v1/configmaps", namespace: "` + ns + `" },
  reconcile() { while (true) {} } };`,
		"index.js": `export default { watch: { resource: "v1/configmaps", namespace: "` + ns + `" },
  indexers: { byName: (cm) => [cm.metadata.name] }, onAdd() {} };`,
	}
	for name, src := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	log := &sink{}
	const timeout = time.Second
	e, err := engine.New(engine.Config{RESTConfig: cp.Config, ScriptsDir: dir, Logger: slog.New(log), HandlerTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	waitRunning(t, e, "reconcile.js", "", ns+"/c") // a call in flight
	cancel()
	stopped := time.Now()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v", err)
		}
	case <-time.After(timeout + 5*time.Second):
		t.Fatal("Run did not return within the handler timeout and 5s")
	}
	t.Logf("Run returned %v after cancellation", time.Since(stopped))
	goleak.VerifyNone(t, ignore,
		// client-go's shared HTTP transports keep idle connections, and klog its flush daemon.
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		goleak.IgnoreAnyFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
	)
}
