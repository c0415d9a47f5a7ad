package admission

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// coveringScript is a countingScript registered for configmaps only, as the engine's scripts
// tell (Covering).
type coveringScript struct{ *countingScript }

func (coveringScript) Covers(r schema.GroupVersionResource, sub string) bool {
	return r == schema.GroupVersionResource{Version: "v1", Resource: "configmaps"} && sub == ""
}

// Reviews whose values are outside the AdmissionReview schema or the script's registration
// are refused with 400 before any script runs, and create no metric series and no decision
// record: without client authentication anyone reaching the port can post them.
func TestServerRefusesValuesOutsideTheSchema(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	var observed atomic.Int32
	script := coveringScript{&countingScript{realScript: newRealScript(t, serverPolicy)}}
	srv := httptest.NewServer(NewServer(Config{
		Lookup:  func(name string) (Script, bool) { return script, name == "team/policy.js" },
		Observe: func(o Observation) { observed.Add(1); m.Observe(o); _ = o.TraceRecord() },
	}))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		name string
		edit func(*admissionv1.AdmissionRequest)
		want string
	}{
		{"made-up operation", func(r *admissionv1.AdmissionRequest) { r.Operation = "HACK-1" }, `operation "HACK-1" is none of`},
		{"lowercase operation", func(r *admissionv1.AdmissionRequest) { r.Operation = "create" }, "is none of"},
		{"no operation", func(r *admissionv1.AdmissionRequest) { r.Operation = "" }, "is none of"},
		{"unregistered resource", func(r *admissionv1.AdmissionRequest) { r.Resource = metaGVR("", "v1", "secrets") }, "registered for v1/secrets"},
		{"unregistered subresource", func(r *admissionv1.AdmissionRequest) { r.SubResource = "status" }, "registered for v1/configmaps/status"},
		{"made-up resource", func(r *admissionv1.AdmissionRequest) { r.Resource = metaGVR("", "v1", "Config Maps!") }, "request resource.resource"},
		{"long resource", func(r *admissionv1.AdmissionRequest) { r.Resource = metaGVR(strings.Repeat("g", 300), "v1", "x") }, "request resource.group"},
		{"made-up subresource", func(r *admissionv1.AdmissionRequest) { r.SubResource = "a b" }, "request subResource"},
		{"bad namespace", func(r *admissionv1.AdmissionRequest) { r.Namespace = "Kube System" }, "request namespace"},
		{"bad name", func(r *admissionv1.AdmissionRequest) { r.Name = "a/b" }, "request name"},
		{"long name", func(r *admissionv1.AdmissionRequest) { r.Name = strings.Repeat("n", 254) }, "request name"},
	} {
		var rv admissionv1.AdmissionReview
		if err := json.Unmarshal(review(t, admissionv1.Create, "alice", configMap(nil)), &rv); err != nil {
			t.Fatal(err)
		}
		tc.edit(rv.Request)
		body, err := json.Marshal(rv)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Post(srv.URL+"/validate/team/policy.js", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(b.String(), tc.want) {
			t.Errorf("%s: %d %s, want 400 with %q", tc.name, resp.StatusCode, b.String(), tc.want)
		}
	}
	if n := testutil.CollectAndCount(m.decisions) + testutil.CollectAndCount(m.duration); n != 0 {
		t.Errorf("hostile reviews created %d metric series, want none", n)
	}
	if n, calls := observed.Load(), script.calls.Load(); n != 0 || calls != 0 {
		t.Errorf("hostile reviews were observed %d times (decision records) and reached the script %d times, want neither", n, calls)
	}
	// The same review, untouched, is answered, observed and counted.
	if status, _, body := post(t, srv.URL+"/validate/team/policy.js", review(t, admissionv1.Create, "alice", configMap(nil))); status != 200 {
		t.Fatalf("the genuine review: %d %s", status, body)
	}
	if n := testutil.CollectAndCount(m.decisions); n != 1 || observed.Load() != 1 {
		t.Errorf("the genuine review: %d series, observed %d times, want 1 and 1", n, observed.Load())
	}
}

// distinctGroup is a shared path's rest naming n distinct scripts.
func distinctGroup(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte('/')
		}
		fmt.Fprintf(&b, "1/script-%d.js", i)
	}
	return b.String()
}

// A shared path of 709 KB naming 50,000 distinct scripts took 5.7 s of CPU to parse (a
// quadratic de-duplication) before its 404. The parse is now linear and stops at
// MaxGroupScripts, and the server refuses a path over MaxPathBytes before parsing it; a path
// within both bounds is looked up at most MaxGroupScripts times.
func TestServerRefusesPathologicalPathsCheaply(t *testing.T) {
	t.Parallel()
	huge := distinctGroup(50_000)
	start := time.Now()
	if names, ok := parseGroup(huge); ok {
		t.Errorf("a path of %d names parsed to %d names, want refused", 50_000, len(names))
	}
	long := "150001/" + strings.Repeat("part/", 150_000) + "last" // one name of many parts
	if names, ok := parseGroup(long); !ok || len(names) != 1 {
		t.Errorf("a name of 150,001 parts: %d names, %v", len(names), ok)
	}
	dups := strings.Repeat("1/a.js/", 100_000) + "1/b.js"
	if names, ok := parseGroup(dups); !ok || strings.Join(names, ",") != "a.js,b.js" {
		t.Errorf("a path naming a.js 100,000 times: %q, %v", names, ok)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("parsing three paths of about a megabyte took %s", took)
	}

	var lookups atomic.Int32
	s := NewServer(Config{Lookup: func(string) (Script, bool) { lookups.Add(1); return nil, false }})
	for _, tc := range []struct {
		path        string
		code        int
		maxLookups  int32
		description string
	}{
		{ValidateGroupPrefix + huge, http.StatusRequestURITooLong, 0, "over MaxPathBytes"},
		{ValidateGroupPrefix + distinctGroup(MaxGroupScripts+1), http.StatusNotFound, 0, "too many scripts"},
		{ValidateGroupPrefix + distinctGroup(MaxGroupScripts), http.StatusNotFound, MaxGroupScripts, "as many scripts as allowed"},
	} {
		lookups.Store(0)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "https://x.invalid"+tc.path, nil))
		if w.Code != tc.code || lookups.Load() > tc.maxLookups {
			t.Errorf("%s (%d bytes): %d after %d lookups, want %d after at most %d", tc.description, len(tc.path), w.Code, lookups.Load(), tc.code, tc.maxLookups)
		}
	}
}

// Over the network, a request line or headers over maxHeaderBytes are refused by net/http
// (431) before the handler.
func TestServerRefusesHugeHeaders(t *testing.T) {
	t.Parallel()
	ts := serveTLS(t, Config{}, time.Second)
	t.Cleanup(func() { ts.stop(t) })
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: ts.clientTLS}}
	defer client.CloseIdleConnections()
	status, _, _ := postTLS(t, client, "https://"+ts.ln.Addr().String()+ValidateGroupPrefix+distinctGroup(50_000), nil)
	if status != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a 709 KB path: %d, want 431", status)
	}
}

// Once its context ends the server keeps accepting new connections and answering for the
// shutdown delay, each answer closing its connection; then it stops, its listener closed and
// every goroutine it started gone. Not parallel: it checks the process's goroutines.
func TestServeAnswersThroughTheShutdownDelay(t *testing.T) {
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) }) // after serveTLS's own cleanups
	const delay = 1500 * time.Millisecond
	ts := serveTLS(t, Config{ShutdownDelay: delay}, time.Second)
	addr := ts.ln.Addr().String()
	kept := &http.Client{Transport: &http.Transport{TLSClientConfig: ts.clientTLS}}
	defer kept.CloseIdleConnections()
	body := review(t, admissionv1.Create, "alice", configMap(nil))
	if status, closes, _ := postTLS(t, kept, "https://"+addr+"/validate/p.js", body); status != 200 || closes {
		t.Fatalf("before the stop: %d, closing the connection %v", status, closes)
	}
	stopped := time.Now()
	ts.cancel()
	// Serve sees the end of its context on its own goroutine: the kept-alive connection's
	// answers close it from then on.
	for {
		status, closes, _ := postTLS(t, kept, "https://"+addr+"/validate/p.js", body)
		if status != 200 {
			t.Fatalf("on a kept-alive connection after the stop: %d", status)
		}
		if closes {
			break
		}
		if time.Since(stopped) > delay/3 {
			t.Fatalf("no answer on the kept-alive connection closed it within %s of the stop", delay/3)
		}
	}
	answered := 0
	for time.Since(stopped) < delay*2/3 {
		fresh := &http.Client{Transport: &http.Transport{TLSClientConfig: ts.clientTLS, DisableKeepAlives: true}}
		status, _, b := postTLS(t, fresh, "https://"+addr+"/validate/p.js", body)
		if status != 200 {
			t.Fatalf("a new connection %s after the stop: %d %s", time.Since(stopped), status, b)
		}
		answered++
	}
	select {
	case err := <-ts.done:
		if took := time.Since(stopped); err != nil || took < delay {
			t.Errorf("Serve returned %v after %s, want nil after the delay of %s", err, took, delay)
		}
	case <-time.After(delay + 5*time.Second):
		t.Fatal("Serve did not return within 5s of the delay's end")
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Error("the listener still accepts after Serve returned")
	}
	t.Logf("%d reviews on new connections answered in the delay", answered)
}
