package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jsinformer/jsinformer/inspection"
)

// Every action, by its effect on the running runner.
func TestDebugActions(t *testing.T) {
	// Not parallel: runners in one process share klog's global logger.
	d := startDebugEnv(t)
	target := d.ns + "/target"

	t.Run("retry runs a key now", func(t *testing.T) {
		d.patchCM(t, "target", `{"data":{"fail":"later"}}`) // stuck.js requeues it after an hour
		eventually(t, "target waits an hour", func() string {
			k, ok := d.keyState(t, "stuck.js", target)
			if !ok || k.NextRetry == nil || time.Until(*k.NextRetry) < 30*time.Minute {
				return fmt.Sprintf("key %+v (found %v)", k, ok)
			}
			return ""
		})
		before := len(records(d.explain(t, "target"), "stuck.js", "reconcile"))
		out := d.must(t, "retry", "stuck.js", target)
		if !strings.Contains(out, "queued for reconcile now") {
			t.Errorf("retry printed %q", out)
		}
		eventually(t, "retry reconciles target at once", func() string {
			if n := len(records(d.explain(t, "target"), "stuck.js", "reconcile")); n <= before {
				return fmt.Sprintf("%d reconcile records, had %d", n, before)
			}
			return ""
		})
	})

	t.Run("pause holds events until resume", func(t *testing.T) {
		d.must(t, "pause", "throws.js")
		if out := d.must(t, "pause", "throws.js"); !strings.Contains(out, "paused already") {
			t.Errorf("second pause printed %q", out)
		}
		before := len(records(d.explain(t, "target"), "throws.js", "update"))
		d.patchCM(t, "target", `{"data":{"paused":"1"}}`)
		eventually(t, "the update waits in throws.js's backlog", func() string {
			var q inspection.QueueView
			d.jsonOf(t, &q, "queue", "throws.js")
			if len(q.Scripts) != 1 || !q.Scripts[0].Paused || q.Scripts[0].Backlog < 1 {
				return fmt.Sprintf("queue %+v", q.Scripts)
			}
			return ""
		})
		if n := len(records(d.explain(t, "target"), "throws.js", "update")); n != before {
			t.Fatalf("paused throws.js handled an update (%d records, had %d)", n, before)
		}
		d.must(t, "resume", "throws.js")
		eventually(t, "the held update is handled after resume", func() string {
			if n := len(records(d.explain(t, "target"), "throws.js", "update")); n <= before {
				return fmt.Sprintf("%d update records, had %d", n, before)
			}
			return ""
		})
		if out := d.must(t, "resume", "throws.js"); !strings.Contains(out, "was not paused") {
			t.Errorf("second resume printed %q", out)
		}
	})

	t.Run("replay with dry-run writes nothing", func(t *testing.T) {
		var rec inspection.TraceRecord
		d.jsonOf(t, &rec, "replay", "writer.js", "cm", target, "--dry-run")
		if rec.Event != "replay" || rec.Handler != "onAdd" || rec.Result != "ok" || len(rec.Writes) != 1 {
			t.Fatalf("replay record = %+v, want onAdd ok with one write", rec)
		}
		if w := rec.Writes[0]; w.Verb != "patch" || !w.DryRun || w.Code != 200 || w.Name != "target" {
			t.Errorf("replay write = %+v, want a dry-run patch of target answered 200", w)
		}
		obj, err := d.dyn.Resource(cmGVR).Namespace(d.ns).Get(t.Context(), "target", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if obj.GetLabels()["touched"] != "" {
			t.Errorf("a dry-run replay stored its patch: labels %v", obj.GetLabels())
		}
		if out := d.must(t, "replay", "writer.js", "cm", target); !strings.Contains(out, "write  patch") {
			t.Errorf("replay table lacks the write:\n%s", out)
		}
		obj, err = d.dyn.Resource(cmGVR).Namespace(d.ns).Get(t.Context(), "target", metav1.GetOptions{})
		if err != nil || obj.GetLabels()["touched"] != "yes" {
			t.Errorf("a replay without --dry-run did not write: labels %v, %v", obj.GetLabels(), err)
		}
	})

	t.Run("log-level", func(t *testing.T) {
		out := d.must(t, "log-level", "debug", "--for", "1m")
		if !strings.Contains(out, "log level DEBUG for 1m0s, then INFO again") {
			t.Errorf("log-level printed %q", out)
		}
		waitOutput(t, d.out, "level=DEBUG") // the runner now logs at debug level
		d.must(t, "log-level", "info", "--for", "1m")
	})
}

// Bad input gets one clear line, with a suggestion where one is close.
func TestDebugBadInput(t *testing.T) {
	// Not parallel: runners in one process share klog's global logger.
	d := startDebugEnv(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"queue", "stuk.js"}, `no such script is loaded (did you mean "stuck.js"?)`},
		{[]string{"explain", "cnfigmaps", d.ns + "/api"}, "did you mean v1/configmaps"},
		{[]string{"explain", "cm", "api"}, "name it NAMESPACE/NAME"},
		// The runner may read namespaces, but no script watches them: explain does not read
		// them for a caller of the debug API.
		{[]string{"explain", "namespaces", d.ns}, "no loaded script watches v1/namespaces"},
		{[]string{"cache", "cm", d.ns + "/apj"}, `no script's cache holds it (did you mean "` + d.ns + `/api"?)`},
		{[]string{"cache", "secrets"}, "no loaded script watches it"},
		{[]string{"cache", "cm", "--index", "stuck.js:byTeem=blue"}, `no such index function (did you mean "byTeam"?)`},
		{[]string{"cache", "cm", "--index", "stuck.js"}, "want SCRIPT:INDEX=VALUE"},
		{[]string{"indexes", "cm", d.ns + "/nope"}, "no script's cache holds it"},
		{[]string{"retry", "stuck.js", d.ns + "/nope"}, "neither queued nor in the script's cache"},
		{[]string{"retry", "throws.js", d.ns + "/api"}, "the script has no reconcile"},
		{[]string{"pause", "nope.js"}, "no such script is loaded"},
		{[]string{"replay", "label.js", "cm", d.ns + "/api"}, "is not in the script's cache"},
		{[]string{"replay", "writer.js", "secrets", d.ns + "/api"}, "it does not watch v1/secrets"},
		{[]string{"log-level", "loud"}, `unknown log level "loud"`},
		{[]string{"log-level", "debug", "--for", "48h"}, "--for must be between 1s and 24h0m0s"},
		{[]string{"tail", "--script", "nope.js"}, "no such script is loaded"},
		{[]string{"explain", "cm", d.ns + "/api", "-o", "yaml"}, "-o/--output must be json or empty"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := d.run(t, tt.args...)
			if err == nil {
				t.Fatal("succeeded, want an error")
			}
			if msg := err.Error(); !strings.Contains(msg, tt.want) || strings.Contains(msg, "\n") {
				t.Fatalf("error %q: want one line containing %q", msg, tt.want)
			}
		})
	}
	t.Run("nothing listening", func(t *testing.T) {
		_, err := execute(t, t.Context(), "status", "--debug-addr", freeAddr(t))
		if err == nil || !strings.Contains(err.Error(), "nothing listens there") {
			t.Fatalf("error %v, want it to say nothing listens", err)
		}
	})
	t.Run("loopback guards", func(t *testing.T) {
		base := "http://" + d.addr
		if code := rawRequest(t, http.MethodGet, base+"/debug/status", "evil.example.com", "", ""); code != http.StatusForbidden {
			t.Errorf("a request for another host name (DNS rebinding) answered %d, want 403", code)
		}
		if code := rawRequest(t, http.MethodPost, base+"/debug/actions/pause", "", "text/plain", `{"script":"throws.js"}`); code != http.StatusUnsupportedMediaType {
			t.Errorf("an action sent as text/plain (a cross-origin form) answered %d, want 415", code)
		}
		if code := rawRequest(t, http.MethodGet, base+"/debug/pprof/", "", "", ""); code != http.StatusNotFound {
			t.Errorf("pprof without --pprof answered %d, want 404", code)
		}
	})
}
