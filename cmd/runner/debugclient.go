package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/jsinformer/jsinformer/debugapi"
)

// debugFlags are the flags every debug subcommand shares: where the runner's debug API is,
// and how to print its answer.
type debugFlags struct {
	addr     string
	output   string
	token    string
	caFile   string
	insecure bool
	timeout  time.Duration
}

// defaultRequestTimeout bounds a debug request (a port-forward to a stuck pod accepts the
// connection and never answers).
const defaultRequestTimeout = 30 * time.Second

func (f *debugFlags) add(cmd *cobra.Command, output bool) {
	cmd.Flags().StringVar(&f.addr, "debug-addr", debugapi.DefaultAddr, "the runner's debug API address (its --debug-addr; in a pod: kubectl port-forward pod/NAME 8089)")
	if output {
		cmd.Flags().StringVarP(&f.output, "output", "o", "", "output format: empty for a table, or json (the API's answer)")
	}
	cmd.Flags().StringVar(&f.token, "token", "", "bearer token for a runner whose debug API is not on loopback (e.g. $(kubectl create token NAME)); default $JSINFORMER_DEBUG_TOKEN")
	cmd.Flags().StringVar(&f.caFile, "certificate-authority", "", "CA file to verify a non-loopback debug API's certificate")
	cmd.Flags().BoolVar(&f.insecure, "insecure-skip-tls-verify", false, "do not verify a non-loopback debug API's certificate (the runner's default one is self-signed)")
	cmd.Flags().DurationVar(&f.timeout, "request-timeout", defaultRequestTimeout, "how long to wait for the runner's answer (for tail: for the stream to start); 0 waits forever")
}

func (f *debugFlags) check() error {
	if f.output != "" && f.output != "json" {
		return usageError(fmt.Errorf("-o/--output must be json or empty, not %q", f.output))
	}
	if f.timeout < 0 {
		return usageError(fmt.Errorf("--request-timeout must be 0 (none) or positive, not %s", f.timeout))
	}
	return nil
}

// client reaches f.addr: over http on loopback, else over https with the bearer token; an
// address given as a URL keeps its scheme.
func (f *debugFlags) client() (*debugClient, error) {
	// The transport bounds the wait for an answer's headers (a stream too); do bounds the
	// whole of a one-shot request with the same timeout.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = f.timeout
	c := &debugClient{addr: f.addr, http: &http.Client{Transport: tr}, timeout: f.timeout,
		token: cmp.Or(f.token, os.Getenv("JSINFORMER_DEBUG_TOKEN"))}
	switch {
	case strings.HasPrefix(f.addr, "http://") || strings.HasPrefix(f.addr, "https://"):
		c.base = strings.TrimSuffix(f.addr, "/")
	case debugapi.IsLoopback(f.addr):
		c.base = "http://" + f.addr
	default:
		c.base = "https://" + f.addr
	}
	if strings.HasPrefix(c.base, "https://") {
		cfg := &tls.Config{InsecureSkipVerify: f.insecure, MinVersion: tls.VersionTLS12} //nolint:gosec // the user asked for it
		if f.caFile != "" {
			pem, err := os.ReadFile(f.caFile)
			if err != nil {
				return nil, fmt.Errorf("read --certificate-authority: %w", err)
			}
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("--certificate-authority %s: no certificate in it", f.caFile)
			}
		}
		tr.TLSClientConfig = cfg
	}
	return c, nil
}

// debugClient calls one runner's debug API.
type debugClient struct {
	base, addr, token string
	http              *http.Client
	timeout           time.Duration // of a one-shot request; 0: none
}

// get fetches path with query and decodes the answer into out; raw, when non-nil, receives
// the body as sent (for -o json).
func (c *debugClient) get(ctx context.Context, path string, query url.Values, out any, raw *[]byte) error {
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	return c.do(req, out, raw)
}

// post sends body as JSON to an action and decodes the answer into out.
func (c *debugClient) post(ctx context.Context, path string, body, out any, raw *[]byte) error {
	data, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encode request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	return c.do(req, out, raw)
}

func (c *debugClient) send(req *http.Request) (*http.Response, error) {
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	return c.http.Do(req)
}

func (c *debugClient) do(req *http.Request, out any, raw *[]byte) error {
	if c.timeout > 0 {
		ctx, cancel := context.WithTimeout(req.Context(), c.timeout)
		defer cancel()
		req = req.WithContext(ctx)
	}
	resp, err := c.send(req)
	if err != nil {
		return c.unreachable(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("read the debug API's answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return apiError(resp.StatusCode, body)
	}
	if raw != nil {
		*raw = body
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("decode the debug API's answer: %w", err)
	}
	return nil
}

// stream reads server-sent events from path and calls on for each, until the stream ends or
// ctx is done (not an error).
func (c *debugClient) stream(ctx context.Context, path string, query url.Values, on func(event, data string) error) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path+"?"+query.Encode(), nil)
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.send(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return c.unreachable(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return apiError(resp.StatusCode, body)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var event, data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data != "" {
				if err := on(event, data); err != nil {
					return err
				}
			}
			event, data = "", ""
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read the tail stream: %w", err)
	}
	return errors.New("the runner closed the tail stream (it stopped?)")
}

func (c *debugClient) unreachable(err error) error {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("cannot reach a runner's debug API at %s: nothing listens there. Is the runner running, "+
			"with --debug-addr %s? (When the default port is taken the runner logs the port it chose, and runner list shows it; "+
			"in a pod: kubectl port-forward pod/NAME 8089)", c.addr, c.addr)
	}
	if hint := tlsHint(err); hint != "" {
		return fmt.Errorf("call the runner's debug API at %s: %w (%s)", c.addr, err, hint)
	}
	if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		return fmt.Errorf("call the runner's debug API at %s: no answer within %s (--request-timeout): %w. "+
			"Is the runner stuck, or a port-forward to a pod that no longer answers?", c.addr, c.timeout, err)
	}
	return fmt.Errorf("call the runner's debug API at %s: %w", c.addr, err)
}

// tlsHint suggests the flags for a certificate the client does not trust.
func tlsHint(err error) string {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	if errors.As(err, &unknown) || errors.As(err, &host) || errors.As(err, &invalid) || errors.As(err, &verify) {
		return "pass the CA that signed the runner's certificate with --certificate-authority, " +
			"or --insecure-skip-tls-verify for the runner's default self-signed one"
	}
	return ""
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// apiError is the API's error message, as one line.
func apiError(code int, body []byte) error {
	var e debugapi.ErrorBody
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		return fmt.Errorf("%s (HTTP %d)", e.Error, code)
	}
	return fmt.Errorf("the debug API answered HTTP %d: %s", code, strings.TrimSpace(string(body)))
}

// printJSON writes an API answer as it came.
func printJSON(w io.Writer, raw []byte) error {
	_, err := w.Write(raw)
	return err
}
