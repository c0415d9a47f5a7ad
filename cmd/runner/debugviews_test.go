package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/status"
)

// The walk-through of docs/debugging.md, on a real control plane: explain says why a script
// never saw an object (its selector), shows the throwing handler's error and the key stuck in
// retries; queue, cache and indexes agree.
func TestDebugViews(t *testing.T) {
	// Not parallel: runners in one process share klog's global logger.
	d := startDebugEnv(t)
	api := d.ns + "/api"

	d.patchCM(t, "api", `{"data":{"fail":"yes","touch":"1"}}`) // throws.js's onUpdate throws
	eventually(t, "explain shows the failed update and the retried key", func() string {
		x := d.explain(t, "api")
		if got := records(x, "throws.js", "update"); len(got) == 0 || got[len(got)-1].Result != "error" ||
			!strings.Contains(got[len(got)-1].Error, "cannot handle api") {
			return fmt.Sprintf("throws.js update records %+v", got)
		}
		if got := records(x, "stuck.js", "reconcile"); len(got) < 2 || got[len(got)-1].Attempt < 2 {
			return fmt.Sprintf("stuck.js reconcile records %+v", got)
		}
		return ""
	})
	x := d.explain(t, "api")
	if !x.Exists || !x.Recording {
		t.Fatalf("explain: exists=%v recording=%v", x.Exists, x.Recording)
	}
	if dl := delivery(x, "label.js"); dl.Delivered || dl.Reason != "selector" || !strings.Contains(dl.Detail, `"app=web"`) || dl.Cached {
		t.Errorf("label.js delivery = %+v, want not delivered because of its selector", dl)
	}
	if dl := delivery(x, "throws.js"); !dl.Delivered || !dl.Cached || dl.State != "current" {
		t.Errorf("throws.js delivery = %+v, want delivered and cached", dl)
	}
	adds := records(x, "throws.js", "add")
	if len(adds) != 1 || !adds[0].Initial || adds[0].Handler != "onAdd" || len(adds[0].Logs) != 1 || adds[0].Logs[0].Message != "saw api" {
		t.Errorf("throws.js add records = %+v, want the initial onAdd with its log line", adds)
	}
	if adds := records(x, "stuck.js", "add"); len(adds) == 0 || len(adds[0].Enqueued) != 1 || adds[0].Enqueued[0] != api {
		t.Errorf("stuck.js add records = %+v, want the add that enqueued %s", adds, api)
	}
	table := d.must(t, "explain", "cm", api)
	for _, want := range []string{"label.js", "selector", "cannot handle api", "quota exceeded", "(attempt ", "log    INFO  saw api"} {
		if !strings.Contains(table, want) {
			t.Errorf("explain table lacks %q:\n%s", want, table)
		}
	}

	t.Run("queue", func(t *testing.T) {
		k, ok := d.keyState(t, "stuck.js", api)
		if !ok || k.Attempts < 1 || !strings.Contains(k.LastError, "quota exceeded") || k.Reason == "" || k.FirstQueued.IsZero() {
			t.Fatalf("stuck.js key %s = %+v (found %v), want failed attempts with the error", api, k, ok)
		}
		out := d.must(t, "queue")
		for _, want := range []string{"SCRIPT", "BACKLOG", "stuck.js", api, "quota exceeded"} {
			if !strings.Contains(out, want) {
				t.Errorf("queue table lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("cache", func(t *testing.T) {
		var c inspection.CacheView
		d.jsonOf(t, &c, "cache", "configmaps", api)
		scripts := map[string]bool{}
		for _, o := range c.Objects {
			scripts[o.Script] = o.Object != nil
		}
		if !scripts["throws.js"] || !scripts["stuck.js"] {
			t.Errorf("cache of %s = %+v, want it in throws.js's and stuck.js's caches with the object", api, c.Objects)
		}
		if _, ok := scripts["label.js"]; ok {
			t.Errorf("label.js's cache holds %s, which its selector excludes", api)
		}
		d.jsonOf(t, &c, "cache", "cm", "--index", "stuck.js:byTeam=blue")
		if len(c.Objects) != 1 || c.Objects[0].Key != api {
			t.Errorf("byTeam=blue = %+v, want %s", c.Objects, api)
		}
		if out := d.must(t, "cache", "cm"); !strings.Contains(out, d.ns+"/target") || !strings.Contains(out, "RESOURCEVERSION") {
			t.Errorf("cache table:\n%s", out)
		}
	})
	t.Run("indexes", func(t *testing.T) {
		var v inspection.IndexesView
		d.jsonOf(t, &v, "indexes", "cm", api)
		if len(v.Scripts) != 1 || v.Scripts[0].Script != "stuck.js" || strings.Join(v.Scripts[0].Values["byTeam"], ",") != "blue" {
			t.Errorf("indexes = %+v, want stuck.js byTeam=[blue]", v.Scripts)
		}
	})
	t.Run("status", func(t *testing.T) {
		var st status.Status
		d.jsonOf(t, &st, "status")
		server, err := kubernetes.NewForConfigOrDie(env.Config).Discovery().ServerVersionWithContext(t.Context())
		if err != nil {
			t.Fatalf("get /version: %v", err)
		}
		if st.Server == nil || st.Server.Version != server.GitVersion || st.Server.Host != env.Config.Host || st.Server.OlderThanSupported {
			t.Errorf("status server = %+v, want version %s at %s within the window", st.Server, server.GitVersion, env.Config.Host)
		}
		out := d.must(t, "status")
		for _, want := range []string{"label.js", "stuck.js", "throws.js", "writer.js", "API server: " + server.GitVersion + " at " + env.Config.Host + ", supported"} {
			if !strings.Contains(out, want) {
				t.Errorf("status lacks %q:\n%s", want, out)
			}
		}
	})
}

// tail streams the handler calls as they happen, filtered by script and object.
func TestDebugTail(t *testing.T) {
	// Not parallel: runners in one process share klog's global logger.
	d := startDebugEnv(t)
	out := &syncBuffer{}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		cmd := newCommand()
		cmd.SetOut(out)
		cmd.SetErr(out)
		cmd.SetArgs([]string{"tail", "--script", "throws.js", "--object", d.ns + "/target", "-o", "json", "--debug-addr", d.addr})
		done <- cmd.ExecuteContext(ctx)
	}()
	// The stream is open once a change made now shows up; changes go on until it does.
	eventually(t, "tail shows throws.js's update of target", func() string {
		d.patchCM(t, "target", fmt.Sprintf(`{"data":{"n":"%d"}}`, time.Now().UnixNano()))
		d.patchCM(t, "api", fmt.Sprintf(`{"data":{"n":"%d"}}`, time.Now().UnixNano()))
		for line := range strings.Lines(out.String()) {
			var rec inspection.TraceRecord
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Event == "update" && rec.Result == "error" {
				return ""
			}
		}
		return "no update record yet:\n" + out.String()
	})
	for line := range strings.Lines(out.String()) {
		var rec inspection.TraceRecord
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("tail -o json printed a line that is not a record: %q", line)
		}
		if rec.Script != "throws.js" || rec.Object != d.ns+"/target" {
			t.Errorf("tail filtered on throws.js and target printed %s %s", rec.Script, rec.Object)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("tail returned %v after interruption", err)
	}
}
