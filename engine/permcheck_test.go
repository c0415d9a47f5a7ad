package engine_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// TestRunFailsPromptlyWithThePermissionCheckOn: Run returns its error (here, a scripts folder
// that does not exist) at once, its permission check stopped, though its context is not done.
func TestRunFailsPromptlyWithThePermissionCheckOn(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	e, err := engine.New(engine.Config{RESTConfig: cp.Config, ScriptsDir: filepath.Join(t.TempDir(), "missing")})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- e.Run(t.Context()) }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Run returned nil for a missing scripts folder")
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not return within 15s of failing")
	}
}
