package netguard

import (
	"fmt"
	"io"
	"net/http"
)

// ReadBody reads resp's body up to max bytes and closes it; a longer body is cut there,
// unread beyond max+1 bytes, and reported with tooLarge (the bytes read are returned so a
// caller can say how far it got; callers should not use them as the body).
func ReadBody(resp *http.Response, max int64) (body []byte, tooLarge bool, err error) {
	defer resp.Body.Close()
	if resp.ContentLength > max {
		return nil, true, nil
	}
	body, err = io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, false, fmt.Errorf("read body: %w", err)
	}
	if int64(len(body)) > max {
		return nil, true, nil
	}
	return body, false, nil
}
