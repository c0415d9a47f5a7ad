package admission

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
)

// A client posting back to back on keep-alive connections, as kube-apiserver does under load,
// loses no request while the server stops: every request is answered, or refused at the
// dial once the listener is closed (where a Service or another replica would take it). Without
// the drain, the server closes a connection the client is writing on.
func TestServeStopsWithoutFailingAKeptAliveRequest(t *testing.T) {
	t.Parallel()
	ts := serveTLS(t, Config{}, 5*time.Second)
	ln, done, cancel := ts.ln, ts.done, ts.cancel
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: ts.clientTLS, MaxIdleConnsPerHost: 8}}
	defer client.CloseIdleConnections()
	body := review(t, admissionv1.Create, "alice", configMap(nil))
	post := func() error {
		resp, err := client.Post("https://"+ln.Addr().String()+"/validate/p.js", "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	answered := make(chan struct{}, 1000)
	for range 4 {
		wg.Go(func() {
			for {
				err := post()
				if err != nil {
					errs <- err
					return
				}
				select {
				case answered <- struct{}{}:
				default:
				}
			}
		})
	}
	for range 200 { // the four posters are on kept-alive connections
		<-answered
	}
	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("a request failed during the stop: %v, want each answered or refused at its dial", err)
		}
	}
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
}
