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
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"

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
}

func (f *debugFlags) add(cmd *cobra.Command, output bool) {
	cmd.Flags().StringVar(&f.addr, "debug-addr", debugapi.DefaultAddr, "the runner's debug API address (its --debug-addr; in a pod: kubectl port-forward pod/NAME 8089)")
	if output {
		cmd.Flags().StringVarP(&f.output, "output", "o", "", "output format: empty for a table, or json (the API's answer)")
	}
	cmd.Flags().StringVar(&f.token, "token", "", "bearer token for a runner whose debug API is not on loopback (e.g. $(kubectl create token NAME)); default $JSINFORMER_DEBUG_TOKEN")
	cmd.Flags().StringVar(&f.caFile, "certificate-authority", "", "CA file to verify a non-loopback debug API's certificate")
	cmd.Flags().BoolVar(&f.insecure, "insecure-skip-tls-verify", false, "do not verify a non-loopback debug API's certificate (the runner's default one is self-signed)")
}

func (f *debugFlags) check() error {
	if f.output != "" && f.output != "json" {
		return usageError(fmt.Errorf("-o/--output must be json or empty, not %q", f.output))
	}
	return nil
}

// client reaches f.addr: over http on loopback, else over https with the bearer token; an
// address given as a URL keeps its scheme.
func (f *debugFlags) client() (*debugClient, error) {
	c := &debugClient{addr: f.addr, http: &http.Client{}, token: cmp.Or(f.token, os.Getenv("JSINFORMER_DEBUG_TOKEN"))}
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
		c.http.Transport = &http.Transport{TLSClientConfig: cfg}
	}
	return c, nil
}

// debugClient calls one runner's debug API.
type debugClient struct {
	base, addr, token string
	http              *http.Client
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
			"with --debug-addr %s? (When the default port is taken the runner logs the port it chose; "+
			"in a pod: kubectl port-forward pod/NAME 8089)", c.addr, c.addr)
	}
	return fmt.Errorf("call the runner's debug API at %s: %w", c.addr, err)
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
