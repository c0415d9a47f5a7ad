package engine_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/engine"
)

// A script loaded after start-up whose watch is forbidden never syncs: the runner stops being
// ready, naming it, and is ready again once the script is gone.
func TestReadyReportsAScriptThatNeverSyncs(t *testing.T) {
	t.Parallel()
	ns, user := uniqueName("ready"), uniqueName("ready-reader")
	client := admin(t)
	mustCreate(t, client, namespacesGVR, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
	grantReadConfigMaps(t, client, ns, user)
	watching := func(resource string) string {
		return `export default { watch: { resource: "` + resource + `", namespace: "` + ns + `" }, onAdd() {} };`
	}
	r := startEngine(t, map[string]string{"configmaps.js": watching("v1/configmaps")}, func(c *engine.Config) {
		c.RESTConfig = rest.CopyConfig(c.RESTConfig)
		c.RESTConfig.Impersonate = rest.ImpersonationConfig{UserName: user}
		c.UnhealthyAfter = 500 * time.Millisecond
	})
	if err := r.engine.Ready(); err != nil {
		t.Fatalf("Ready() = %v after start-up", err)
	}

	r.write(t, "secrets.js", watching("v1/secrets"))
	// The version is late to sync before its informer has failed for as long: wait for both.
	err := waitReadyErr(t, r.engine, func(err error) bool { return err != nil && strings.Contains(err.Error(), "forbidden") })
	for _, want := range []string{"secrets.js", "has not synced", "v1/secrets namespace=" + ns, "forbidden"} {
		if !errors.Is(err, engine.ErrNotReady) || !strings.Contains(err.Error(), want) {
			t.Errorf("Ready() = %v; want ErrNotReady mentioning %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "configmaps.js") {
		t.Errorf("Ready() = %v; blames the healthy script", err)
	}
	r.log.waitFor(t, "one WARN naming the script", 1,
		msg("informer may not list/watch: the runner lacks a permission; its scripts start once it is granted", "scripts", "secrets.js", "resource", "v1/secrets"))

	if err := os.Remove(filepath.Join(r.dir, "secrets.js")); err != nil {
		t.Fatal(err)
	}
	if err := waitReadyErr(t, r.engine, func(err error) bool { return err == nil }); err != nil {
		t.Fatal(err)
	}
}

// waitReadyErr polls Ready until done accepts its answer, and returns it.
func waitReadyErr(t *testing.T, e *engine.Engine, done func(error) bool) error {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := e.Ready()
		if done(err) {
			return err
		}
		if time.Now().After(deadline) {
			t.Fatalf("Ready() = %v after 30s", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
