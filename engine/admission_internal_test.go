package engine

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/engine/internal/version"
	"github.com/jsinformer/jsinformer/plugins"
	"github.com/jsinformer/jsinformer/scripting"
)

// policy denies with its tag and what ctx.cache holds; an object named "slow" keeps it
// busy for 300 ms first.
func policy(tag string) string {
	return cmScript(tag, `validate(obj, ctx) {
    if (obj.metadata.name === "slow") { const end = Date.now() + 300; while (Date.now() < end) {} }
    return { allowed: false, message: "`+tag+` " + ctx.cache.list().length + " " + ctx.operation };
  }, admission: { operations: ["CREATE"], failurePolicy: "Ignore" }`)
}

func admissionReq(name string) scripting.AdmissionRequest {
	return scripting.AdmissionRequest{Operation: "CREATE", Resource: "v1/configmaps", Namespace: "ns", Name: name,
		Object: scripting.Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "ns"}}}
}

func validateNow(t *testing.T, e *Engine, name string) (scripting.Validation, error) {
	t.Helper()
	a, ok := e.AdmissionScript("a.js")
	if !ok {
		return scripting.Validation{}, ErrNotServing
	}
	return a.Validate(t.Context(), admissionReq(name))
}

func TestAdmissionFollowsTheServingVersion(t *testing.T) {
	t.Parallel()
	e := loaderEngine(t, newFakeSource(3))
	var changes atomic.Int32
	e.cfg.OnAdmission = func() { changes.Add(1) }
	e.loadContent("a.js", policy("v1"))
	v1 := pending(e, "a.js")
	if _, err := validateNow(t, e, "x"); !errors.Is(err, ErrNotServing) {
		t.Fatalf("before its version synced: %v, want ErrNotServing", err)
	}
	e.syncUntil(t, v1)
	if res, err := validateNow(t, e, "x"); err != nil || res.Message != "v1 3 CREATE" || res.Allowed {
		t.Fatalf("v1 answered %+v, %v; want a denial reading its cache of 3", res, err)
	}
	entries := e.AdmissionEntries()
	if len(entries) != 1 || !entries[0].Validate || entries[0].Spec.FailurePolicy != "Ignore" ||
		len(entries[0].Watches) != 1 || entries[0].Watches[0].Namespace != "ns" || entries[0].Watches[0].Resource.GVR != configMapsGVR {
		t.Fatalf("entries = %+v", entries)
	}

	// A reload while a request is in flight on v1: v1's answer arrives, later ones are v2's.
	inFlight := make(chan error, 1)
	go func() {
		res, err := validateNow(t, e, "slow")
		if err == nil && res.Message != "v1 3 CREATE" {
			err = errors.New("in-flight answer: " + res.Message)
		}
		inFlight <- err
	}()
	waitFor(t, "v1 busy", func() bool { return v1.ver.AdmissionIdle() < 2 })
	e.loadContent("a.js", policy("v2"))
	v2 := pending(e, "a.js")
	e.syncUntil(t, v2)
	if res, err := validateNow(t, e, "x"); err != nil || res.Message != "v2 3 CREATE" {
		t.Fatalf("after the reload: %+v, %v; want v2's answer", res, err)
	}
	if err := <-inFlight; err != nil {
		t.Fatalf("the request in flight during the reload: %v", err)
	}
	waitState(t, v1, version.StateDone)

	e.onMemoryStop(memoryStop{v: v2, bytes: 1 << 30})
	if _, err := validateNow(t, e, "x"); !errors.Is(err, ErrStopped) {
		t.Errorf("after a memory stop: %v, want ErrStopped", err)
	}
	if entries := e.AdmissionEntries(); len(entries) != 1 || !entries[0].Stopped {
		t.Errorf("a stopped script's entry = %+v, want kept and marked stopped", entries)
	}
	e.loadContent("a.js", cmScript("v3", `onAdd() {}`))
	e.syncUntil(t, pending(e, "a.js"))
	if _, err := validateNow(t, e, "x"); !errors.Is(err, ErrNotServing) || len(e.AdmissionEntries()) != 0 {
		t.Errorf("a content without validate still serves: %v, %+v", err, e.AdmissionEntries())
	}
	e.loadContent("a.js", policy("v4"))
	e.syncUntil(t, pending(e, "a.js"))
	e.onPluginEvent(plugins.Event{Kind: plugins.Removed, Source: plugins.Source{Name: "a.js"}})
	if _, err := validateNow(t, e, "x"); !errors.Is(err, ErrNotServing) {
		t.Errorf("after removal: %v, want ErrNotServing", err)
	}
	// v1, v2 (stopped), none (v3), v4, removed.
	if n := changes.Load(); n != 6 {
		t.Errorf("OnAdmission called %d times, want 6", n)
	}
}

func TestAdmissionWaitsForAFreeRuntimeWithinItsDeadline(t *testing.T) {
	t.Parallel()
	e := loaderEngine(t, newFakeSource(1))
	e.loadContent("a.js", policy("v1"))
	e.syncUntil(t, pending(e, "a.js"))
	done := make(chan error, 3)
	for range 3 { // two runtimes: the third waits for one
		go func() { _, err := validateNow(t, e, "slow"); done <- err }()
	}
	start := time.Now()
	for range 3 {
		if err := <-done; err != nil {
			t.Errorf("a request waiting for a runtime: %v", err)
		}
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("three 300 ms calls on two runtimes took %s", took)
	}
	a, _ := e.AdmissionScript("a.js")
	blockers := make(chan struct{}, 2)
	for range 2 {
		go func() { _, _ = validateNow(t, e, "slow"); blockers <- struct{}{} }()
	}
	waitFor(t, "both runtimes busy", func() bool { return current(e, "a.js").ver.AdmissionIdle() == 0 })
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := a.Validate(ctx, admissionReq("x")); err == nil || !strings.Contains(err.Error(), "wait for a free admission runtime") {
		t.Errorf("with every runtime busy past the deadline: %v", err)
	}
	<-blockers
	<-blockers
}

// TestAdmissionCallEndsByTheRequestsDeadline: a call runs under the request's deadline when
// it comes before the runtime's own timeout, and none starts once it has passed, even on a
// free runtime.
func TestAdmissionCallEndsByTheRequestsDeadline(t *testing.T) {
	t.Parallel()
	e := loaderEngine(t, newFakeSource(1))
	e.loadContent("a.js", cmScript("v1", `validate(obj) {
    if (obj.metadata.name === "spin") for (;;) {}
  }, admission: { operations: ["CREATE"], timeoutSeconds: 10 }`))
	e.syncUntil(t, pending(e, "a.js"))
	a, _ := e.AdmissionScript("a.js")
	ctx, cancel := context.WithTimeout(t.Context(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := a.Validate(ctx, admissionReq("spin"))
	if took := time.Since(start); !errors.Is(err, scripting.ErrTimeout) || !strings.Contains(err.Error(), "at the admission request's deadline") ||
		took > time.Second {
		t.Errorf("a spinning call with 150ms left: %v after %s; want a timeout at the request's deadline, not the runtime's 2s", err, took)
	}
	if _, err := a.Validate(ctx, admissionReq("x")); err == nil || !strings.Contains(err.Error(), "start the call") {
		t.Errorf("a call after the deadline: %v, want it not started", err)
	}
	if idle := current(e, "a.js").ver.AdmissionIdle(); idle != 2 {
		t.Errorf("%d idle runtimes, want both", idle)
	}
}

// waitFor polls cond until it holds, for at most 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestAdmissionOnlyStartsNoInformer: a validate-only script that never reads ctx.cache is
// served without an informer of its watch (its entry still covers the watch), and syncs at
// once; one that reads ctx.cache gets its informer and its cache.
func TestAdmissionOnlyStartsNoInformer(t *testing.T) {
	t.Parallel()
	source := newFakeSource(3)
	e := loaderEngine(t, source)
	e.loadContent("a.js", cmScript("plain", `validate(obj) { if (obj.metadata.name === "bad") return { allowed: false, message: "bad name" }; }`))
	e.syncUntil(t, pending(e, "a.js"))
	if n, _ := refs(source); n != 0 {
		t.Errorf("%d informers for a validate-only script that reads no cache, want 0", n)
	}
	if res, err := validateNow(t, e, "bad"); err != nil || res.Allowed || res.Message != "bad name" {
		t.Errorf("validate = %+v, %v; want the script's denial", res, err)
	}
	if entries := e.AdmissionEntries(); len(entries) != 1 || len(entries[0].Watches) != 1 || entries[0].Watches[0].Namespace != "ns" {
		t.Errorf("entries = %+v, want the watch's rule", entries)
	}
	e.loadContent("a.js", policy("cached"))
	e.syncUntil(t, pending(e, "a.js"))
	if n, _ := refs(source); n != 1 {
		t.Errorf("%d informers for a script reading ctx.cache, want 1", n)
	}
	if res, err := validateNow(t, e, "x"); err != nil || res.Message != "cached 3 CREATE" {
		t.Errorf("validate = %+v, %v; want a denial reading its cache of 3", res, err)
	}
}
