package admission

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/jsinformer/jsinformer/scripting"
)

// countingScript counts the calls that reach the script.
type countingScript struct {
	*realScript
	calls atomic.Int32
}

func (c *countingScript) Validate(ctx context.Context, req scripting.AdmissionRequest) (scripting.Validation, error) {
	c.calls.Add(1)
	return c.realScript.Validate(ctx, req)
}

func (c *countingScript) Mutate(ctx context.Context, req scripting.AdmissionRequest) (scripting.Object, error) {
	c.calls.Add(1)
	return c.realScript.Mutate(ctx, req)
}

const serverPolicy = `export default {
  validate(obj, ctx) {
    if (ctx.userInfo.username === "mallory") return { allowed: false, message: "not you, " + ctx.userInfo.groups.join(","), code: 422 };
    return { allowed: true, warnings: [ctx.operation + " " + ctx.resource + " " + ctx.namespace + "/" + ctx.name + " dry=" + ctx.dryRun] };
  },
};`

func newTestServer(t *testing.T, src string, cfg Config) (*httptest.Server, *countingScript) {
	t.Helper()
	script := &countingScript{realScript: newRealScript(t, src)}
	cfg.Lookup = func(name string) (Script, bool) { return script, name == "team/policy.js" }
	srv := httptest.NewServer(NewServer(cfg))
	t.Cleanup(srv.Close)
	return srv, script
}

func review(t *testing.T, op admissionv1.Operation, user string, obj scripting.Object) []byte {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	dry := true
	r := admissionv1.AdmissionReview{TypeMeta: reviewType, Request: &admissionv1.AdmissionRequest{
		UID: "req-1", Operation: op, Namespace: "default", Name: "c", DryRun: &dry,
		Resource: metaGVR("", "v1", "configmaps"), Object: rawExt(raw)}}
	r.Request.UserInfo.Username, r.Request.UserInfo.Groups = user, []string{"devs", "ops"}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// post sends body and returns the status, the content type and the response body.
func post(t *testing.T, url string, body []byte) (status int, contentType string, b []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, err = io.ReadAll(resp.Body); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

func decodeResponse(t *testing.T, b []byte) *admissionv1.AdmissionResponse {
	t.Helper()
	var r admissionv1.AdmissionReview
	if err := json.Unmarshal(b, &r); err != nil || r.Response == nil || r.APIVersion != "admission.k8s.io/v1" || r.Kind != "AdmissionReview" {
		t.Fatalf("response %s: %v", b, err)
	}
	return r.Response
}

func TestServerAnswersAdmissionReviews(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t, serverPolicy, Config{})
	status, contentType, body := post(t, srv.URL+"/validate/team/policy.js", review(t, admissionv1.Create, "alice", configMap(nil)))
	if status != 200 || contentType != "application/json" {
		t.Fatalf("status %d, %s", status, body)
	}
	r := decodeResponse(t, body)
	if r.UID != "req-1" || !r.Allowed || strings.Join(r.Warnings, "|") != "CREATE v1/configmaps default/c dry=true" {
		t.Errorf("allowed response = %+v", r)
	}
	_, _, body = post(t, srv.URL+"/validate/team/policy.js", review(t, admissionv1.Create, "mallory", configMap(nil)))
	r = decodeResponse(t, body)
	if r.Allowed || r.Result == nil || r.Result.Code != 422 || r.Result.Message != "not you, devs,ops" || r.Result.Reason != "Invalid" {
		t.Errorf("denied response = %+v, result %+v", r, r.Result)
	}
}

func TestServerSendsMutationsAsJSONPatch(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t, strings.ReplaceAll(labelMutator, "MODE", `"enforce"`), Config{})
	_, _, body := post(t, srv.URL+"/mutate/team/policy.js", review(t, admissionv1.Create, "alice", configMap(map[string]any{"do": "label"})))
	r := decodeResponse(t, body)
	if !r.Allowed || r.PatchType == nil || *r.PatchType != admissionv1.PatchTypeJSONPatch ||
		!samePatch(t, r.Patch, `[{"op":"remove","path":"/data/k"},{"op":"add","path":"/metadata/labels/team","value":"platform"}]`) {
		t.Errorf("response = %+v, patch %s", r, r.Patch)
	}
	_, _, body = post(t, srv.URL+"/mutate/team/policy.js", review(t, admissionv1.Create, "alice", configMap(map[string]any{"do": "none"})))
	if r := decodeResponse(t, body); !r.Allowed || r.Patch != nil || r.PatchType != nil {
		t.Errorf("no change answered %+v", r)
	}
}

func TestServerRefusesBadRequestsBeforeAnyScript(t *testing.T) {
	t.Parallel()
	srv, script := newTestServer(t, serverPolicy, Config{MaxBodyBytes: 4096})
	good := review(t, admissionv1.Create, "alice", configMap(nil))
	v1beta1 := bytes.Replace(good, []byte(`"admission.k8s.io/v1"`), []byte(`"admission.k8s.io/v1beta1"`), 1)
	for _, tc := range []struct {
		name, method, path, contentType string
		body                            []byte
		code                            int
		want                            string
	}{
		{"unknown path", "POST", "/healthz", "application/json", good, 404, "unknown path"},
		{"empty script name", "POST", "/validate/", "application/json", good, 404, "unknown path"},
		{"unknown script", "POST", "/validate/other.js", "application/json", good, 404, `no loaded script "other.js" serves validate`},
		{"kind the script lacks", "POST", "/mutate/team/policy.js", "application/json", good, 404, `no loaded script "team/policy.js" serves mutate`},
		{"GET", "GET", "/validate/team/policy.js", "application/json", nil, 405, "POSTed"},
		{"content type", "POST", "/validate/team/policy.js", "application/yaml", good, 415, "not application/json"},
		{"not JSON", "POST", "/validate/team/policy.js", "application/json", []byte("kind: AdmissionReview"), 400, "not an AdmissionReview"},
		{"another kind", "POST", "/validate/team/policy.js", "application/json", []byte(`{"apiVersion":"v1","kind":"ConfigMap"}`), 400, `not an AdmissionReview: kind "ConfigMap"`},
		{"v1beta1", "POST", "/validate/team/policy.js", "application/json", v1beta1, 400, "AdmissionReview admission.k8s.io/v1beta1 is not served"},
		{"no request", "POST", "/validate/team/policy.js", "application/json", []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`), 400, "has no request"},
		{"too large", "POST", "/validate/team/policy.js", "application/json", review(t, admissionv1.Create, "alice", configMap(map[string]any{"big": strings.Repeat("x", 5000)})), 413, "over 4096 bytes"},
		{"bad object", "POST", "/validate/team/policy.js", "application/json", bytes.Replace(good, []byte(`"object":{`), []byte(`"object":"str","x":{`), 1), 400, "decode"},
	} {
		req, err := http.NewRequest(tc.method, srv.URL+tc.path, bytes.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", tc.contentType)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: %d %s, want %d containing %q", tc.name, resp.StatusCode, body, tc.code, tc.want)
		}
	}
	if n := script.calls.Load(); n != 0 {
		t.Errorf("bad requests reached the script %d times", n)
	}
}

func TestServerAnswersAStuckScriptByItsFailurePolicy(t *testing.T) {
	t.Parallel()
	// realScript's calls keep their own timeout (the engine's take the request's budget).
	script := &countingScript{realScript: newRealScriptTimeout(t, `export default { validate() { for (;;) {} } }`, 200*time.Millisecond)}
	srv := httptest.NewServer(NewServer(Config{Lookup: func(name string) (Script, bool) { return script, name == "team/policy.js" }}))
	t.Cleanup(srv.Close)
	start := time.Now()
	_, _, body := post(t, srv.URL+"/validate/team/policy.js?timeout=1s", review(t, admissionv1.Create, "alice", configMap(nil)))
	r := decodeResponse(t, body)
	if r.Allowed || r.Result == nil || r.Result.Code != 500 || !strings.Contains(r.Result.Message, "policy.js validate failed: policy.js:1:") {
		t.Errorf("response = %+v", r.Result)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("answered after %s, past the API server's timeout of 1s", took)
	}
}

// Serve speaks HTTP/1.1 only unless Config.HTTP2, whatever the client offers, and returns once
// its context ends (an idle keep-alive connection does not hold it).
func TestServeOverTLSAndShutDown(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		http2     bool
		wantProto string
	}{{false, "HTTP/1.1"}, {true, "HTTP/2.0"}} {
		t.Run(tt.wantProto, func(t *testing.T) {
			t.Parallel()
			ts := serveTLS(t, Config{HTTP2: tt.http2}, time.Second)
			ln, done, cancel := ts.ln, ts.done, ts.cancel
			client := &http.Client{Transport: &http.Transport{TLSClientConfig: ts.clientTLS, ForceAttemptHTTP2: true}}
			defer client.CloseIdleConnections()
			resp, err := client.Post("https://"+ln.Addr().String()+"/validate/p.js", "application/json",
				bytes.NewReader(review(t, admissionv1.Create, "alice", configMap(nil))))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if r := decodeResponse(t, body); !r.Allowed || resp.Proto != tt.wantProto {
				t.Errorf("over TLS: %+v in %s, want allowed in %s", r, resp.Proto, tt.wantProto)
			}
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Serve returned %v after its context ended", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Serve did not return within 5s of its context ending")
			}
			if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
				t.Error("the listener still accepts after Serve returned")
			}
		})
	}
}

// tlsServer is a Server of serverPolicy run by Serve on a loopback listener until cancel.
type tlsServer struct {
	ln        net.Listener
	done      chan error // what Serve returned
	cancel    context.CancelFunc
	clientTLS *tls.Config // trusts the server's certificate
}

// serveTLS runs Serve for a Server of cfg (its Lookup answering serverPolicy) with grace.
func serveTLS(t *testing.T, cfg Config, grace time.Duration) tlsServer {
	t.Helper()
	script := &countingScript{realScript: newRealScript(t, serverPolicy)}
	cfg.Lookup = func(string) (Script, bool) { return script, true }
	s := NewServer(cfg)
	cert, pool := selfSigned(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { // joined by the test through done
		done <- s.Serve(ctx, ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, grace)
	}()
	return tlsServer{ln: ln, done: done, cancel: cancel, clientTLS: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
}

// selfSigned is a certificate for 127.0.0.1 and a pool trusting it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(parsed)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: parsed}, pool
}

// stop cancels the server and waits for Serve, reporting its error.
func (ts tlsServer) stop(t *testing.T) {
	ts.cancel()
	if err := <-ts.done; err != nil {
		t.Errorf("serve: %v", err)
	}
}
