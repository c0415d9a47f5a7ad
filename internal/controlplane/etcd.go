package controlplane

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// CompactEtcd compacts etcd's history up to its current revision, so watches from any older
// resourceVersion fail with "410 Gone" once kube-apiserver's watch cache no longer holds them
// (after RestartAPIServer, at once). It uses etcd's JSON gateway; no etcd client is linked.
func (cp *ControlPlane) CompactEtcd(ctx context.Context) (revision int64, err error) {
	var status struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	// A range over an empty key reads nothing but carries the current revision in its header.
	if err := cp.etcdCall(ctx, "/v3/kv/range", map[string]any{"key": "AA=="}, &status); err != nil {
		return 0, err
	}
	if revision, err = strconv.ParseInt(status.Header.Revision, 10, 64); err != nil {
		return 0, fmt.Errorf("read etcd revision %q: %w", status.Header.Revision, err)
	}
	body := map[string]any{"revision": strconv.FormatInt(revision, 10), "physical": true}
	if err := cp.etcdCall(ctx, "/v3/kv/compaction", body, nil); err != nil {
		return 0, err
	}
	return revision, nil
}

func (cp *ControlPlane) etcdCall(ctx context.Context, path string, in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("encode etcd request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cp.setup.etcdURL+path, bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("build etcd request: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("call etcd %s: %w", path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("call etcd %s: %s: %s", path, resp.Status, body)
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return fmt.Errorf("decode etcd %s answer: %w", path, err)
		}
	}
	return nil
}
