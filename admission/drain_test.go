package admission

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
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
	script := &countingScript{realScript: newRealScript(t, serverPolicy)}
	s := NewServer(Config{Lookup: func(string) (Script, bool) { return script, true }})
	cert, pool := selfSigned(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- s.Serve(ctx, ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, 5*time.Second)
	}()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, MaxIdleConnsPerHost: 8}}
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
